//go:build !openblas

package kernels

// packB lays op(B) out in the panels sgemmSerial would pack: for each pass
// of kstep rows (the same depth blocking, so the same sums), each NR-wide
// column panel as kc rows of NR floats, zero-padded past n.
func packB(p *PackedB, transB bool, k, n int, b []float32, ldb int) {
	kern := nativeKernel
	if n <= narrowWidth && narrowNative != nil {
		kern = narrowNative
	}
	NR := kern.nr
	nkb := (k + kcBlock - 1) / kcBlock
	p.k, p.n, p.kern, p.kstep, p.npad = k, n, kern, (k+nkb-1)/nkb, (n+NR-1)/NR*NR
	p.panels = alignedFloats(p.panels, k*p.npad)
	for pc := 0; pc < k; pc += p.kstep {
		kc := min(p.kstep, k-pc)
		blk := p.panels[pc*p.npad : (pc+kc)*p.npad]
		for jr := 0; jr < n; jr += NR {
			dst := blk[jr*kc : (jr+NR)*kc]
			if transB {
				packTransposed(dst, b, ldb, jr, min(NR, n-jr), pc, kc, NR)
			} else {
				packRows(dst, b, ldb, pc, jr, min(NR, n-jr), kc, NR)
			}
		}
	}
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
// calling goroutine; j0 is a multiple of NR. Loop order and blocking are
// sgemmSerial's (passes of depth, mc-row blocks of A in place, the last
// partial MR rows packed), with B's panels read from the PackedB.
func packedSerial(b *PackedB, i0, i1, j0, j1 int, alpha float32, a []float32, lda int, c []float32, ldc int) {
	kern := b.kern
	MR, NR := kern.mr, kern.nr
	mc := max(mcBlock/MR, 1) * MR
	ws := workspaces.Get().(*workspace)
	defer workspaces.Put(ws)
	ws.a = alignedFloats(ws.a, MR*b.kstep)
	for pc := 0; pc < b.k; pc += b.kstep {
		kc := min(b.kstep, b.k-pc)
		var be float32
		if pc > 0 {
			be = 1
		}
		blk := b.panels[pc*b.npad:]
		for ic := i0; ic < i1; ic += mc {
			mcb := min(mc, i1-ic)
			mfull := mcb / MR * MR
			if mfull < mcb {
				packAEdge(ws.a[:MR*kc], a, lda, false, ic+mfull, mcb-mfull, pc, kc, MR)
			}
			for jr := j0; jr < j1; jr += NR {
				nr := min(NR, j1-jr)
				mask := uint64(1)<<uint(nr) - 1
				bp := &blk[jr*kc]
				for ir := 0; ir < mfull; ir += MR {
					kern.rowA(kc, &a[(ic+ir)*lda+pc], lda, bp, NR, &c[(ic+ir)*ldc+jr], ldc, alpha, be, MR, mask)
				}
				if mfull < mcb {
					kern.colA(kc, &ws.a[0], MR, bp, NR, &c[(ic+mfull)*ldc+jr], ldc, alpha, be, mcb-mfull, mask)
				}
			}
		}
	}
}
