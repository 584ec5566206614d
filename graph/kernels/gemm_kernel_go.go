package kernels

import "unsafe"

// gemmKernel is an MR×NR register-tile micro-kernel. Both functions compute
//
//	C[i, j] = alpha·Σ_{p<kc} A(i, p)·B(p, j) + beta·C[i, j]
//
// for i < mr and the columns j whose bit is set in mask; other elements of
// C are not touched, and C is not read when beta == 0 (cblas semantics). B(p, ·)
// is NR contiguous floats at b + p·bs; all NR of them must be readable.
// rowA reads A(i, p) at a + i·as + p, colA at a + i + p·as; all MR rows must be
// readable whatever mr is (the driver packs partial row panels).
type gemmKernel struct {
	name   string
	mr, nr int
	rowA   kernelFunc
	colA   kernelFunc
	// mc is the rows of A per cache block (rounded down to mr), sized so
	// an mc×kcBlock block of A stays in the core's L2; 0 means mcBlock.
	mc int
}

// mcRows is the kernel's row block, mc or the default mcBlock.
func (k *gemmKernel) mcRows() int {
	if k.mc > 0 {
		return k.mc
	}
	return mcBlock
}

type kernelFunc func(kc int, a *float32, as int, b *float32, bs int, c *float32, ldc int, alpha, beta float32, mr int, mask uint64)

// kernelGo is the portable micro-kernel, used without assembly.
var kernelGo = &gemmKernel{
	name: "go 4x4", mr: 4, nr: 4,
	rowA: func(kc int, a *float32, as int, b *float32, bs int, c *float32, ldc int, alpha, beta float32, mr int, mask uint64) {
		goKernel4x4(kc, a, as, 1, b, bs, c, ldc, alpha, beta, mr, mask)
	},
	colA: func(kc int, a *float32, as int, b *float32, bs int, c *float32, ldc int, alpha, beta float32, mr int, mask uint64) {
		goKernel4x4(kc, a, 1, as, b, bs, c, ldc, alpha, beta, mr, mask)
	},
}

// goKernel4x4 is the 4×4 tile kernel in Go; A(i, p) is at a + i·rs + p·cs.
// Each element is the assembly kernels' sequence of operations: fused
// multiply-adds from 0 over p, then alpha·acc, then fused beta·C + that.
// A step takes fma32's inlined fast path for all 16 elements, or fma32
// for all of them when any needs its fix-up.
func goKernel4x4(kc int, ap *float32, rs, cs int, bp *float32, bs int, cp *float32, ldc int, alpha, beta float32, mr int, mask uint64) {
	var c00, c01, c02, c03, c10, c11, c12, c13, c20, c21, c22, c23, c30, c31, c32, c33 float32
	if kc > 0 {
		a := unsafe.Slice(ap, 3*rs+(kc-1)*cs+1)
		b := unsafe.Slice(bp, (kc-1)*bs+4)
		ia, ib := 0, 0
		for p := 0; p < kc; p++ {
			bb := b[ib : ib+4 : ib+4]
			b0, b1, b2, b3 := bb[0], bb[1], bb[2], bb[3]
			a0, a1, a2, a3 := a[ia], a[ia+rs], a[ia+2*rs], a[ia+3*rs]
			n00, ok00 := fma32Fast(a0, b0, c00)
			n01, ok01 := fma32Fast(a0, b1, c01)
			n02, ok02 := fma32Fast(a0, b2, c02)
			n03, ok03 := fma32Fast(a0, b3, c03)
			n10, ok10 := fma32Fast(a1, b0, c10)
			n11, ok11 := fma32Fast(a1, b1, c11)
			n12, ok12 := fma32Fast(a1, b2, c12)
			n13, ok13 := fma32Fast(a1, b3, c13)
			n20, ok20 := fma32Fast(a2, b0, c20)
			n21, ok21 := fma32Fast(a2, b1, c21)
			n22, ok22 := fma32Fast(a2, b2, c22)
			n23, ok23 := fma32Fast(a2, b3, c23)
			n30, ok30 := fma32Fast(a3, b0, c30)
			n31, ok31 := fma32Fast(a3, b1, c31)
			n32, ok32 := fma32Fast(a3, b2, c32)
			n33, ok33 := fma32Fast(a3, b3, c33)
			if ok00 && ok01 && ok02 && ok03 && ok10 && ok11 && ok12 && ok13 &&
				ok20 && ok21 && ok22 && ok23 && ok30 && ok31 && ok32 && ok33 {
				c00, c01, c02, c03 = n00, n01, n02, n03
				c10, c11, c12, c13 = n10, n11, n12, n13
				c20, c21, c22, c23 = n20, n21, n22, n23
				c30, c31, c32, c33 = n30, n31, n32, n33
			} else {
				c00 = fma32(a0, b0, c00)
				c01 = fma32(a0, b1, c01)
				c02 = fma32(a0, b2, c02)
				c03 = fma32(a0, b3, c03)
				c10 = fma32(a1, b0, c10)
				c11 = fma32(a1, b1, c11)
				c12 = fma32(a1, b2, c12)
				c13 = fma32(a1, b3, c13)
				c20 = fma32(a2, b0, c20)
				c21 = fma32(a2, b1, c21)
				c22 = fma32(a2, b2, c22)
				c23 = fma32(a2, b3, c23)
				c30 = fma32(a3, b0, c30)
				c31 = fma32(a3, b1, c31)
				c32 = fma32(a3, b2, c32)
				c33 = fma32(a3, b3, c33)
			}
			ia += cs
			ib += bs
		}
	}
	acc := [4][4]float32{{c00, c01, c02, c03}, {c10, c11, c12, c13}, {c20, c21, c22, c23}, {c30, c31, c32, c33}}
	for i := 0; i < mr; i++ {
		for j := 0; j < 4; j++ {
			if mask&(1<<j) == 0 {
				continue
			}
			// One element at a time: C may end before column 3 of the last row.
			e := (*float32)(unsafe.Add(unsafe.Pointer(cp), 4*(i*ldc+j)))
			v := alpha * acc[i][j]
			if beta != 0 {
				v = fma32(beta, *e, v)
			}
			*e = v
		}
	}
}
