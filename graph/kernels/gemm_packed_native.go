//go:build !openblas

package kernels

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

// sgemmPacked splits C = A·B over the cores as sgemmNative does: by MR-row
// blocks when the product is at least as tall as wide, else by NR-column
// panels.
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
	if mt >= nt {
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
