package kernels

import (
	"math"
	"unsafe"
)

// The portable FTZ micro-kernel of the emulated bfloat16 products
// (bf16_tile_emul.go), and roundRows in Go.

// kernelGoFTZ is the portable micro-kernel of the emulation: goKernel4x4's
// sequence of operations, each with DAZ and FTZ (fmaFTZ).
var kernelGoFTZ = &gemmKernel{
	name: "go 4x4 ftz", mr: 4, nr: 4,
	rowA: func(kc int, a *float32, as int, b *float32, bs int, c *float32, ldc int, alpha, beta float32, mr int, mask uint64) {
		goKernelFTZ(kc, a, as, 1, b, bs, c, ldc, alpha, beta, mr, mask)
	},
	colA: func(kc int, a *float32, as int, b *float32, bs int, c *float32, ldc int, alpha, beta float32, mr int, mask uint64) {
		goKernelFTZ(kc, a, 1, as, b, bs, c, ldc, alpha, beta, mr, mask)
	},
}

// goKernelFTZ is the 4×4 tile with A(i, p) at a + i·rs + p·cs: for each
// element an fmaFTZ chain from +0 over p, then alpha·acc, then beta·C + that
// (fused) when beta ≠ 0.
func goKernelFTZ(kc int, ap *float32, rs, cs int, bp *float32, bs int, cp *float32, ldc int, alpha, beta float32, mr int, mask uint64) {
	var acc [4][4]float32
	if kc > 0 {
		a := unsafe.Slice(ap, 3*rs+(kc-1)*cs+1)
		b := unsafe.Slice(bp, (kc-1)*bs+4)
		for p := 0; p < kc; p++ {
			// DAZ once per operand; acc is never subnormal (fmaFTZ
			// flushes, and the fast path below gives a normal or zero).
			var av, bv [4]float32
			for i := range 4 {
				av[i] = daz(a[i*rs+p*cs])
			}
			for j := range 4 {
				bv[j] = daz(b[p*bs+j])
			}
			for i := range 4 {
				for j := range 4 {
					// fma32Fast's result is fmaFTZ's when it is at least
					// 2^-126 (or zero) and not exactly 2^-126, whose
					// tininess fmaFTZ decides.
					r, ok := fma32Fast(av[i], bv[j], acc[i][j])
					if !ok || math.Float32bits(r)&0x7fffffff == 0x00800000 {
						r = fmaFTZ(av[i], bv[j], acc[i][j])
					}
					acc[i][j] = r
				}
			}
		}
	}
	c := unsafe.Slice(cp, (mr-1)*ldc+4)
	negZero := float32(math.Copysign(0, -1))
	for i := 0; i < mr; i++ {
		for j := range 4 {
			if mask&(1<<j) == 0 {
				continue
			}
			v := fmaFTZ(alpha, acc[i][j], negZero)
			if beta != 0 {
				v = fmaFTZ(beta, c[i*ldc+j], v)
			}
			c[i*ldc+j] = v
		}
	}
}

// roundRowsGo is roundRows in Go.
func roundRowsGo(dst, src []float32, rows, n, ldd, lds int, swap bool) {
	for r := 0; r < rows; r++ {
		d, x := dst[r*ldd:], src[r*lds:r*lds+n]
		if !swap {
			for i, v := range x {
				d[i] = RoundBF16(v)
			}
			continue
		}
		for i, v := range x {
			d[i^1] = RoundBF16(v)
		}
		if n%2 == 1 {
			d[n-1] = 0
		}
	}
}
