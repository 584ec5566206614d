package kernels

import (
	"sync"
	"unsafe"
)

// Cache blocking of the native SGEMM (Goto/BLIS loop order jc, pc, ic, jr,
// ir). A is read in place (only a last partial MR-row panel is packed), B is
// read in place when not transposed (only a last partial NR-column panel is
// packed) and packed into NR-wide panels when transposed.
const (
	kcBlock = 512  // depth of one pass (C is read and written once per pass)
	mcBlock = 448  // rows of A per pass (rounded to MR); mc×kc stays in L2
	ncBlock = 2048 // columns of B packed at once when transB
)

// parallelMinWork is the m·n·k below which a product runs on one core.
const parallelMinWork = 1 << 18

// workspace holds one goroutine's packing buffers.
type workspace struct {
	a, b []float32
}

var workspaces = sync.Pool{New: func() any { return new(workspace) }}

// alignedFloats returns a slice of n floats starting on a 64-byte boundary,
// reusing buf when it is large enough.
func alignedFloats(buf []float32, n int) []float32 {
	if cap(buf) >= n && uintptr(unsafe.Pointer(unsafe.SliceData(buf)))%64 == 0 {
		return buf[:n]
	}
	raw := make([]float32, n+16)
	off := int((64 - uintptr(unsafe.Pointer(&raw[0]))%64) % 64 / 4)
	return raw[off : off+n : off+n]
}

// sgemmNative computes C = alpha·op(A)·op(B) + beta·C with micro-kernel
// kern, splitting the work over the available cores. Arguments are
// already checked; m, n, k > 0 and alpha != 0.
func sgemmNative(kern *gemmKernel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, parallel bool) {
	if !parallel || m*n*k < parallelMinWork {
		ws := workspaces.Get().(*workspace)
		sgemmSerial(kern, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, ws)
		workspaces.Put(ws)
		return
	}
	mt := (m + kern.mr - 1) / kern.mr
	nt := (n + kern.nr - 1) / kern.nr
	if mt >= nt {
		// Split rows: each chunk reads its own rows of A and all of B.
		grain := splitGrain(mt, 4, 1) * kern.mr
		parallelFor(m, grain, kern.mr, func(lo, hi int) {
			ws := workspaces.Get().(*workspace)
			aoff := lo * lda
			if transA {
				aoff = lo
			}
			sgemmSerial(kern, transA, transB, hi-lo, n, k, alpha, a[aoff:], lda, b, ldb, beta, c[lo*ldc:], ldc, ws)
			workspaces.Put(ws)
		})
		return
	}
	// Split columns: each chunk reads all of A and its own columns of B.
	grain := splitGrain(nt, 2, 1) * kern.nr
	parallelFor(n, grain, kern.nr, func(lo, hi int) {
		ws := workspaces.Get().(*workspace)
		boff := lo
		if transB {
			boff = lo * ldb
		}
		sgemmSerial(kern, transA, transB, m, hi-lo, k, alpha, a, lda, b[boff:], ldb, beta, c[lo:], ldc, ws)
		workspaces.Put(ws)
	})
}

// sgemmSerial is the blocked product on the calling goroutine.
func sgemmSerial(kern *gemmKernel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, ws *workspace) {
	MR, NR := kern.mr, kern.nr
	// Even K blocks: k = 300 runs as 150+150, not 256+44.
	nkb := (k + kcBlock - 1) / kcBlock
	kstep := (k + nkb - 1) / nkb
	mc := max(mcBlock/MR, 1) * MR
	ws.a = alignedFloats(ws.a, MR*kstep)
	if transB {
		ws.b = alignedFloats(ws.b, kstep*((min(n, ncBlock)+NR-1)/NR*NR))
	} else {
		ws.b = alignedFloats(ws.b, kstep*NR)
	}
	for pc := 0; pc < k; pc += kstep {
		kc := min(kstep, k-pc)
		be := beta
		if pc > 0 {
			be = 1
		}
		for jc := 0; jc < n; jc += ncBlock {
			nc := min(ncBlock, n-jc)
			if transB {
				for jr := 0; jr < nc; jr += NR {
					packBTrans(ws.b[jr*kc:(jr+NR)*kc], b, ldb, jc+jr, min(NR, nc-jr), pc, kc, NR)
				}
			} else if nc%NR != 0 {
				jr := nc / NR * NR
				packBEdge(ws.b[:kc*NR], b, ldb, jc+jr, nc-jr, pc, kc, NR)
			}
			for ic := 0; ic < m; ic += mc {
				mcb := min(mc, m-ic)
				mfull := mcb / MR * MR
				if mfull < mcb {
					packAEdge(ws.a[:MR*kc], a, lda, transA, ic+mfull, mcb-mfull, pc, kc, MR)
				}
				for jr := 0; jr < nc; jr += NR {
					nr := min(NR, nc-jr)
					mask := uint64(1)<<uint(nr) - 1
					var bp *float32
					bs := NR
					switch {
					case transB:
						bp = &ws.b[jr*kc]
					case nr < NR:
						bp = &ws.b[0]
					default:
						bp = &b[pc*ldb+jc+jr]
						bs = ldb
					}
					cp := ic*ldc + jc + jr
					for ir := 0; ir < mfull; ir += MR {
						if transA {
							kern.colA(kc, &a[pc*lda+ic+ir], lda, bp, bs, &c[cp+ir*ldc], ldc, alpha, be, MR, mask)
						} else {
							kern.rowA(kc, &a[(ic+ir)*lda+pc], lda, bp, bs, &c[cp+ir*ldc], ldc, alpha, be, MR, mask)
						}
					}
					if mfull < mcb {
						kern.colA(kc, &ws.a[0], MR, bp, bs, &c[cp+mfull*ldc], ldc, alpha, be, mcb-mfull, mask)
					}
				}
			}
		}
	}
}

// packBTrans packs columns [j0, j0+nr) × depth [p0, p0+kc) of op(B) = Bᵀ
// (B stored n×k) into dst as kc rows of NR floats, zero-padding nr..NR.
func packBTrans(dst, b []float32, ldb, j0, nr, p0, kc, NR int) {
	packTransposed(dst, b, ldb, j0, nr, p0, kc, NR)
}

// packBEdge packs columns [j0, j0+nr) × depth [p0, p0+kc) of B (stored
// k×n) into dst as kc rows of NR floats, zero-padding nr..NR.
func packBEdge(dst, b []float32, ldb, j0, nr, p0, kc, NR int) {
	packRows(dst, b, ldb, p0, j0, nr, kc, NR)
}

// packAEdge packs rows [i0, i0+mr) × depth [p0, p0+kc) of op(A) into dst
// as kc columns of MR floats (A(i, p) at dst[p·MR+i]), zero-padding mr..MR.
func packAEdge(dst, a []float32, lda int, transA bool, i0, mr, p0, kc, MR int) {
	if transA { // A stored k×m: op(A)'s columns are A's rows
		packRows(dst, a, lda, p0, i0, mr, kc, MR)
		return
	}
	packTransposed(dst, a, lda, i0, mr, p0, kc, MR)
}

// packRows copies rows [r0, r0+kc) × columns [c0, c0+w) of the row-major
// matrix src (row stride ld) into dst as kc rows of R floats, zero-padding
// w..R.
func packRows(dst, src []float32, ld, r0, c0, w, kc, R int) {
	for p := 0; p < kc; p++ {
		row := dst[p*R : (p+1)*R]
		copy(row, src[(r0+p)*ld+c0:(r0+p)*ld+c0+w])
		clear(row[w:])
	}
}

// packTransposed packs rows [r0, r0+w) × columns [c0, c0+kc) of the
// row-major matrix src (row stride ld) transposed into dst as kc rows of R
// floats, src(r0+i, c0+p) at dst[p·R+i], zero-padding w..R.
func packTransposed(dst, src []float32, ld, r0, w, c0, kc, R int) {
	dst = dst[:kc*R]
	if packTrans(dst, R, src[r0*ld+c0:], ld, w, R, kc) {
		return
	}
	for i := 0; i < w; i++ {
		s := src[(r0+i)*ld+c0:]
		s = s[:kc]
		d := dst[i:]
		for p, v := range s {
			d[p*R] = v
		}
	}
	if w < R {
		for p := 0; p < kc; p++ {
			clear(dst[p*R+w : (p+1)*R])
		}
	}
}

// scaleMatrix sets C = beta·C (C = 0 when beta == 0, whatever C held).
func scaleMatrix(m, n int, beta float32, c []float32, ldc int) {
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(row)
			continue
		}
		if beta != 1 {
			for j := range row {
				row[j] *= beta
			}
		}
	}
}
