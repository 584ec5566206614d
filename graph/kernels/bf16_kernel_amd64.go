//go:build amd64 && !purego

package kernels

import "golang.org/x/sys/cpu"

//go:generate go run gen_bf16_asm.go

// hasAVX512BF16 reports VDPBF16PS (Cooper Lake, Sapphire Rapids and later;
// AMD Zen 4 and later). GODEBUG=cpu.avx512bf16=off clears it.
var hasAVX512BF16 = hasAVX512 && cpu.X86.HasAVX512BF16

//go:noescape
func bf16dot14x32AVX512BF16(kp int, a *uint32, rs int, b *uint32, qs int, c *float32, ldc int, alpha, beta float32, mr int, mask uint64)

var kernelBF16AVX512 = &bf16Kernel{name: "avx512bf16 14x32", mr: 14, nr: 32, fn: bf16dot14x32AVX512BF16}

// bf16HWKernel returns the VDPBF16PS micro-kernel, or nil when the CPU
// lacks it.
func bf16HWKernel() *bf16Kernel {
	if hasAVX512BF16 {
		return kernelBF16AVX512
	}
	return nil
}
