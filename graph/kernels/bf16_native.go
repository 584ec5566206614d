package kernels

import "sync"

// The bfloat16 products on VDPBF16PS. The operands are converted once per
// product into dwords that each hold a pair of bfloat16 (depth 2q low, 2q+1
// high; a cut last pair padded with +0):
//
//   - op(A) row-major (rs = kp, qs = 1) when A is not transposed: each row's
//     floats are consecutive, so are its pairs;
//   - op(A) pair-major (rs = 1, qs = ms) when it is: rows 2q and 2q+1 of
//     the stored A make the q-th row of pairs;
//   - op(B) in NR-column panels, each kp rows of NR dwords.
//
// A's rows are padded with zeros to a whole number of MR-row tiles, since
// the kernel reads MR rows whatever mr is. Each pass of bf16Step(k) depth
// runs the tiles over its pairs; the passes fix the sums (sgemmBF16Ref),
// not the split over the cores.

// bf16Kernel is a VDPBF16PS register tile: see gen_bf16_asm.go.
type bf16Kernel struct {
	name   string
	mr, nr int
	fn     func(kp int, a *uint32, rs int, b *uint32, qs int, c *float32, ldc int, alpha, beta float32, mr int, mask uint64)
}

// bf16Packed holds a product's converted operands.
type bf16Packed struct {
	a      []uint32
	rs, qs int // A(i, q) at a[i·rs + q·qs]
	b      []uint32
	kp     int // pairs of depth
	npad   int // columns of B, rounded up to NR
}

// sgemmBF16HW computes a checked bfloat16 product with kern.
func sgemmBF16HW(kern *bf16Kernel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, parallel bool) {
	MR, NR := kern.mr, kern.nr
	kp := (k + 1) / 2
	mpad := (m + MR - 1) / MR * MR
	npad := (n + NR - 1) / NR * NR
	bufA := borrowWords(mpad * kp)
	defer words.Put(bufA)
	bufB := borrowWords(npad * kp)
	defer words.Put(bufB)
	op := bf16Packed{a: *bufA, b: *bufB, kp: kp, npad: npad}
	if transA {
		op.rs, op.qs = 1, mpad
	} else {
		op.rs, op.qs = kp, 1
	}
	par := parallel && m*n*k >= parallelMinWork
	convertA(op.a, transA, m, mpad, k, a, lda, par)
	packPanelsBF16(op.b, transB, k, n, NR, b, ldb, false, par)
	runBF16(kern, &op, m, n, k, alpha, beta, c, ldc, par)
}

// runBF16 runs the passes of C = alpha·op(A)·op(B) + beta·C over the
// converted operands, split over the cores when parallel.
func runBF16(kern *bf16Kernel, op *bf16Packed, m, n, k int, alpha, beta float32, c []float32, ldc int, parallel bool) {
	splitTiles((m+kern.mr-1)/kern.mr, (n+kern.nr-1)/kern.nr, parallel, func(r0, r1, p0, p1 int) {
		bf16Tiles(kern, op, m, n, k, r0, r1, p0, p1, alpha, beta, c, ldc)
	})
}

// splitTiles runs tiles over mt row tiles × nt column panels of C: at once,
// or split over the cores when parallel, by row tiles when there are at
// least as many as panels and by panels otherwise.
func splitTiles(mt, nt int, parallel bool, tiles func(r0, r1, p0, p1 int)) {
	switch {
	case !parallel:
		tiles(0, mt, 0, nt)
	case mt >= nt:
		parallelFor(mt, splitGrain(mt, 4, 1), 1, func(lo, hi int) { tiles(lo, hi, 0, nt) })
	default:
		parallelFor(nt, splitGrain(nt, 2, 1), 1, func(lo, hi int) { tiles(0, mt, lo, hi) })
	}
}

// bf16RowBlock is the row tiles of A per cache block: 32 tiles of 14 rows
// × 256 pairs is 448 KiB.
const bf16RowBlock = 32

// bf16Tiles computes the row tiles [r0, r1) × column panels [p0, p1) of C,
// pass by pass.
func bf16Tiles(kern *bf16Kernel, op *bf16Packed, m, n, k, r0, r1, p0, p1 int, alpha, beta float32, c []float32, ldc int) {
	MR, NR := kern.mr, kern.nr
	qstep := bf16Step(k) / 2
	for q0 := 0; q0 < op.kp; q0 += qstep {
		kq := min(qstep, op.kp-q0)
		be := beta
		if q0 > 0 {
			be = 1
		}
		for rb := r0; rb < r1; rb += bf16RowBlock {
			for jp := p0; jp < p1; jp++ {
				j := jp * NR
				mask := uint64(1)<<uint(min(NR, n-j)) - 1
				bp := &op.b[(jp*op.kp+q0)*NR]
				for it := rb; it < min(rb+bf16RowBlock, r1); it++ {
					i := it * MR
					kern.fn(kq, &op.a[i*op.rs+q0*op.qs], op.rs, bp, op.qs, &c[i*ldc+j], ldc, alpha, be, min(MR, m-i), mask)
				}
			}
		}
	}
}

// pairBF16 is the dword of the pair (x0, x1): x0 rounded to bfloat16 in
// the low half, x1 in the high half.
func pairBF16(x0, x1 float32) uint32 { return uint32(ToBF16(x0)) | uint32(ToBF16(x1))<<16 }

// convertA sets dst to op(A)'s pairs: row-major (kp per row) when A is not
// transposed, pair-major (mpad per row of pairs) when it is; rows m to
// mpad are zero.
func convertA(dst []uint32, transA bool, m, mpad, k int, a []float32, lda int, parallel bool) {
	kp := (k + 1) / 2
	if !transA {
		run := func(lo, hi int) {
			for i := lo; i < hi; i++ {
				if i >= m {
					clear(dst[i*kp : (i+1)*kp])
					continue
				}
				pairRow(dst[i*kp:(i+1)*kp], a[i*lda:i*lda+k])
			}
		}
		if parallel {
			parallelFor(mpad, 64, 1, run)
		} else {
			run(0, mpad)
		}
		return
	}
	run := func(lo, hi int) {
		for q := lo; q < hi; q++ {
			row := dst[q*mpad : (q+1)*mpad]
			r0 := a[2*q*lda : 2*q*lda+m]
			var r1 []float32
			if 2*q+1 < k {
				r1 = a[(2*q+1)*lda : (2*q+1)*lda+m]
			}
			pairRows(row[:m], r0, r1)
			clear(row[m:])
		}
	}
	if parallel {
		parallelFor(kp, 16, 1, run)
	} else {
		run(0, kp)
	}
}

// pairRow sets dst[q] to the pair (x[2q], x[2q+1]), x[len(x)] read as +0.
func pairRow(dst []uint32, x []float32) {
	k := len(x)
	for q := 0; q < k/2; q++ {
		dst[q] = pairBF16(x[2*q], x[2*q+1])
	}
	if k%2 == 1 {
		dst[k/2] = pairBF16(x[k-1], 0)
	}
}

// pairRows sets dst[i] to the pair (x0[i], x1[i]); a nil x1 is zeros.
func pairRows(dst []uint32, x0, x1 []float32) {
	if x1 == nil {
		for i := range dst {
			dst[i] = pairBF16(x0[i], 0)
		}
		return
	}
	x0, x1 = x0[:len(dst)], x1[:len(dst)]
	for i := range dst {
		dst[i] = pairBF16(x0[i], x1[i])
	}
}

// packPanelsBF16 sets dst to op(B)'s pairs in NR-column panels, panel p at
// dst[p·kp·NR:], row q of it the pairs (B(2q, j), B(2q+1, j)); columns
// past n are zero. With swap (B not transposed, k even), rows 2q and 2q+1
// of B are exchanged: B is a widened operand (see widen).
func packPanelsBF16(dst []uint32, transB bool, k, n, NR int, b []float32, ldb int, swap, parallel bool) {
	kp := (k + 1) / 2
	np := (n + NR - 1) / NR
	run := func(lo, hi int) {
		for p := lo; p < hi; p++ {
			j0 := p * NR
			w := min(NR, n-j0)
			panel := dst[p*kp*NR : (p+1)*kp*NR]
			if transB {
				for jj := 0; jj < NR; jj++ {
					if jj >= w {
						for q := 0; q < kp; q++ {
							panel[q*NR+jj] = 0
						}
						continue
					}
					row := b[(j0+jj)*ldb : (j0+jj)*ldb+k]
					for q := 0; q < k/2; q++ {
						panel[q*NR+jj] = pairBF16(row[2*q], row[2*q+1])
					}
					if k%2 == 1 {
						panel[(kp-1)*NR+jj] = pairBF16(row[k-1], 0)
					}
				}
				continue
			}
			for q := 0; q < kp; q++ {
				out := panel[q*NR : (q+1)*NR]
				p0, p1 := 2*q, 2*q+1
				if swap {
					p0, p1 = p1, p0
				}
				r0 := b[p0*ldb+j0 : p0*ldb+j0+w]
				var r1 []float32
				if p1 < k {
					r1 = b[p1*ldb+j0 : p1*ldb+j0+w]
				}
				pairRows(out[:w], r0, r1)
				clear(out[w:])
			}
		}
	}
	if parallel {
		parallelFor(np, 1, 1, run)
	} else {
		run(0, np)
	}
}

var words = sync.Pool{New: func() any { return new([]uint32) }}

// borrowWords returns a pooled buffer of at least n words (len n).
func borrowWords(n int) *[]uint32 {
	buf := words.Get().(*[]uint32)
	if cap(*buf) < n {
		*buf = make([]uint32, n)
	}
	*buf = (*buf)[:n]
	return buf
}
