//go:build amd64 && !purego

package kernels

//go:generate go run gen_gemm_asm.go

// Register-tile micro-kernels in gemm_kernel_amd64.s (generated). See
// gemmKernel for the contract.

//go:noescape
func sgemm14x32AVX512RowA(kc int, a *float32, as int, b *float32, bs int, c *float32, ldc int, alpha, beta float32, mr int, mask uint64)

//go:noescape
func sgemm14x32AVX512ColA(kc int, a *float32, as int, b *float32, bs int, c *float32, ldc int, alpha, beta float32, mr int, mask uint64)

//go:noescape
func sgemm6x16AVX2RowA(kc int, a *float32, as int, b *float32, bs int, c *float32, ldc int, alpha, beta float32, mr int, mask uint64)

//go:noescape
func sgemm6x16AVX2ColA(kc int, a *float32, as int, b *float32, bs int, c *float32, ldc int, alpha, beta float32, mr int, mask uint64)

var (
	kernelAVX512 = &gemmKernel{name: "avx512 14x32", mr: 14, nr: 32, rowA: sgemm14x32AVX512RowA, colA: sgemm14x32AVX512ColA}
	// AVX2 parts (Zen 2/3, Haswell–Skylake client) have 256–512 KiB of L2
	// per core: 120 rows × kcBlock of A is 240 KiB.
	kernelAVX2 = &gemmKernel{name: "avx2 6x16", mr: 6, nr: 16, rowA: sgemm6x16AVX2RowA, colA: sgemm6x16AVX2ColA, mc: 120}
)

// narrowKernel returns the micro-kernel for products at most 16 columns
// wide, or nil to use bestKernel's: AVX-512's 32-wide tile would compute
// twice the columns needed, as in attention with head dim 16 (P·V, dQ, dV,
// dK).
func narrowKernel() *gemmKernel {
	if hasAVX512 && hasAVX2 {
		return kernelAVX2
	}
	return nil
}

// bestKernel returns the fastest micro-kernel this CPU runs.
func bestKernel() *gemmKernel {
	switch {
	case hasAVX512:
		return kernelAVX512
	case hasAVX2:
		return kernelAVX2
	}
	return kernelGo
}

// allKernels lists every micro-kernel this CPU can run, for tests.
func allKernels() []*gemmKernel {
	ks := []*gemmKernel{kernelGo}
	if hasAVX2 {
		ks = append(ks, kernelAVX2)
	}
	if hasAVX512 {
		ks = append(ks, kernelAVX512)
	}
	return ks
}

// The same tiles with MXCSR set to DAZ, FTZ and round to nearest even for
// their duration: the bfloat16 products' emulation (bf16_emul.go).

//go:noescape
func sgemm14x32AVX512RowAFTZ(kc int, a *float32, as int, b *float32, bs int, c *float32, ldc int, alpha, beta float32, mr int, mask uint64)

//go:noescape
func sgemm14x32AVX512ColAFTZ(kc int, a *float32, as int, b *float32, bs int, c *float32, ldc int, alpha, beta float32, mr int, mask uint64)

//go:noescape
func sgemm6x16AVX2RowAFTZ(kc int, a *float32, as int, b *float32, bs int, c *float32, ldc int, alpha, beta float32, mr int, mask uint64)

//go:noescape
func sgemm6x16AVX2ColAFTZ(kc int, a *float32, as int, b *float32, bs int, c *float32, ldc int, alpha, beta float32, mr int, mask uint64)

var (
	kernelAVX512FTZ = &gemmKernel{name: "avx512 14x32 ftz", mr: 14, nr: 32, rowA: sgemm14x32AVX512RowAFTZ, colA: sgemm14x32AVX512ColAFTZ}
	kernelAVX2FTZ   = &gemmKernel{name: "avx2 6x16 ftz", mr: 6, nr: 16, rowA: sgemm6x16AVX2RowAFTZ, colA: sgemm6x16AVX2ColAFTZ, mc: 120}
)

// emulKernel returns the fastest FTZ micro-kernel this CPU runs, for the
// emulated bfloat16 products.
func emulKernel() *gemmKernel {
	switch {
	case hasAVX512:
		return kernelAVX512FTZ
	case hasAVX2:
		return kernelAVX2FTZ
	}
	return kernelGoFTZ
}

// allEmulKernels lists every FTZ micro-kernel this CPU can run, for tests.
func allEmulKernels() []*gemmKernel {
	ks := []*gemmKernel{kernelGoFTZ}
	if hasAVX2 {
		ks = append(ks, kernelAVX2FTZ)
	}
	if hasAVX512 {
		ks = append(ks, kernelAVX512FTZ)
	}
	return ks
}
