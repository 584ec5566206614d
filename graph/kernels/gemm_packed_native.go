//go:build !openblas

package kernels

import "runtime"

// packB lays op(B) out in the panels sgemmSerial would pack: for each pass
// of kstep rows (the same depth blocking, so the same sums), each NR-wide
// column panel as kc rows of NR floats, zero-padded past n.
func packB(p *PackedB, transB bool, k, n int, b []float32, ldb int) {
	kern := kernelFor(n)
	NR := kern.nr
	p.k, p.n, p.kern, p.kstep, p.npad = k, n, kern, depthStep(k), (n+NR-1)/NR*NR
	p.panels = alignedFloats(p.panels, k*p.npad)
	forDepthBlocks(k, 0, func(pc, kc int, _ float32) {
		packBBlock(p.panels[pc*p.npad:(pc+kc)*p.npad], transB, b, ldb, 0, n, pc, kc, NR, 0, p.npad/NR)
	})
}

// sgemmPacked splits C = A·B over the cores by MR-row blocks or by
// NR-column panels, as packedByRows chooses.
func sgemmPacked(m int, a []float32, lda int, b *PackedB, c []float32, ldc int, epi func(i0, i1, j0, j1 int)) {
	kern := b.kern
	if m*b.n*b.k < parallelMinWork {
		packedSerial(b, 0, m, 0, b.n, 1, a, lda, c, ldc)
		if epi != nil {
			epi(0, m, 0, b.n)
		}
		return
	}
	mt := (m + kern.mr - 1) / kern.mr
	nt := b.npad / kern.nr
	if packedByRows(kern, m, nt, runtime.GOMAXPROCS(0)) {
		parallelFor(m, splitGrain(mt, 4, 1)*kern.mr, kern.mr, func(lo, hi int) {
			packedSerial(b, lo, hi, 0, b.n, 1, a, lda, c, ldc)
			if epi != nil {
				epi(lo, hi, 0, b.n)
			}
		})
		return
	}
	parallelFor(b.n, splitGrain(nt, 2, 1)*kern.nr, kern.nr, func(lo, hi int) {
		packedSerial(b, 0, m, lo, hi, 1, a, lda, c, ldc)
		if epi != nil {
			epi(0, m, lo, hi)
		}
	})
}

// packedByRows reports whether sgemmPacked splits an m-row product with nt
// column panels over workers cores by rows (else by column panels). By rows
// when the product is at least as tall as wide, as sgemmNative splits,
// unless its row chunks (about four a core) would be shorter than the
// kernel's row block while there are panels enough for four column chunks
// a core: every row chunk reads all of B, so short row chunks fetch the
// packed weights from beyond the core's cache once per chunk, where a
// column chunk fetches only its own panels and re-reads A, which the
// previous op left in cache. At one image (197 rows) that is ViT's
// attn.proj and mlp.fc2. The split never changes a sum.
func packedByRows(kern *gemmKernel, m, nt, workers int) bool {
	mt := (m + kern.mr - 1) / kern.mr
	if mt < nt {
		return false
	}
	if workers <= 1 {
		return true // one chunk, all of A
	}
	rows := (mt + 4*workers - 1) / (4 * workers) * kern.mr
	return rows >= kern.mcRows() || nt < 4*workers
}

func sgemmPackedSerial(m int, alpha float32, a []float32, lda int, b *PackedB, c []float32, ldc int) {
	packedSerial(b, 0, m, 0, b.n, alpha, a, lda, c, ldc)
}

// packedSerial computes rows [i0, i1) × columns [j0, j1) of C = alpha·A·B on the
// calling goroutine; j0 is a multiple of NR. It is sgemmSerial's loop
// (blockRows for each depth pass) with B's panels read from the PackedB.
func packedSerial(b *PackedB, i0, i1, j0, j1 int, alpha float32, a []float32, lda int, c []float32, ldc int) {
	ws := workspaces.Get().(*workspace)
	defer workspaces.Put(ws)
	forDepthBlocks(b.k, 0, func(pc, kc int, be float32) {
		blockRows(b.kern, false, i1-i0, b.n, j1-j0, kc, pc, j0, alpha, a[i0*lda:], lda, nil, 0, true, b.panels[pc*b.npad+j0*kc:], be, c[i0*ldc:], ldc, ws)
	})
}
