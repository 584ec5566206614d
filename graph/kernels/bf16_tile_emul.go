package kernels

// The product in AMX's order (sgemmBF16Ref) on the float32 FMA tiles
// that run with DAZ and FTZ (emulKernel): for each block of 32 of depth,
// one call of the tile over the 16 even depths (every other row of the
// packed panels: strides 2·MR and 2·NR) gives e, from +0; a second over
// the odd ones with beta 1 on the same tile gives e + o, rounded once; the
// accumulator then takes it (addFTZ). The operands are rounded to bfloat16
// and packed as the SGEMM driver packs them, A in MR-row panels (kw×MR),
// B in NR-column panels (kw×NR), the depth padded with +0 to kw, a
// multiple of 32. Each tile runs over the whole depth with its
// accumulator in a register tile's worth of memory; Sgemm's epilogue
// (epilogueFTZ) ends it.

// sgemmBF16Emul computes a checked product (m, n, k > 0, alpha ≠ 0)
// in AMX's order with the FTZ tile kern.
func sgemmBF16Emul(kern *gemmKernel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, parallel bool) {
	NR := kern.nr
	kw := (k + tileBlock - 1) / tileBlock * tileBlock
	npad := (n + NR - 1) / NR * NR
	par := parallel && m*n*k >= parallelMinWork
	bufB, pb := borrowFloats(npad * kw)
	defer scratch.Put(bufB)
	packTileEmul(pb, transB, n, k, kw, NR, b, ldb, par)
	runTileEmul(kern, transA, m, n, k, alpha, a, lda, pb, beta, c, ldc, par)
}

// runTileEmul is sgemmBF16Emul on op(B) packed by packTileEmul (pb).
func runTileEmul(kern *gemmKernel, transA bool, m, n, k int, alpha float32, a []float32, lda int, pb []float32, beta float32, c []float32, ldc int, par bool) {
	MR, NR := kern.mr, kern.nr
	kw := (k + tileBlock - 1) / tileBlock * tileBlock
	mt, nt := (m+MR-1)/MR, (n+NR-1)/NR
	bufA, pa := borrowFloats(mt * MR * kw)
	defer scratch.Put(bufA)
	packTileEmul(pa, !transA, m, k, kw, MR, a, lda, par)
	splitTiles(mt, nt, par, func(r0, r1, p0, p1 int) {
		buf, e := borrowFloats(2 * MR * NR)
		defer scratch.Put(buf)
		e, acc := e[:MR*NR], e[MR*NR:]
		full := uint64(1)<<uint(NR) - 1
		for jp := p0; jp < p1; jp++ {
			j := jp * NR
			bp := pb[jp*kw*NR:]
			for it := r0; it < r1; it++ {
				i := it * MR
				ap := pa[it*kw*MR:]
				for p := 0; p < kw; p += tileBlock {
					dst := e
					if p == 0 {
						dst = acc
					}
					kern.colA(tileBlock/2, &ap[p*MR], 2*MR, &bp[p*NR], 2*NR, &dst[0], NR, 1, 0, MR, full)
					kern.colA(tileBlock/2, &ap[(p+1)*MR], 2*MR, &bp[(p+1)*NR], 2*NR, &dst[0], NR, 1, 1, MR, full)
					if p > 0 {
						addFTZ(acc, e)
					}
				}
				w := min(NR, n-j)
				for r := 0; r < min(MR, m-i); r++ {
					epilogueFTZ(c[(i+r)*ldc+j:(i+r)*ldc+j+w], acc[r*NR:r*NR+w], alpha, beta)
				}
			}
		}
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

// packTileEmul lays out an operand of x rows (of A) or columns (of B) by
// depth k, rounded to bfloat16, in R-wide panels of kw rows: panel t at
// dst[t·kw·R:], depth p of row or column t·R + q at [p·R + q]; padding is
// +0. byRow: the operand is stored x rows of k (row stride ld: A not
// transposed, a transposed B); else k rows of x.
func packTileEmul(dst []float32, byRow bool, x, k, kw, R int, src []float32, ld int, parallel bool) {
	np := (x + R - 1) / R
	run := func(lo, hi int) {
		var tb *[]float32
		var t []float32
		if byRow {
			tb, t = borrowFloats(R * kw)
			defer scratch.Put(tb)
		}
		for q := lo; q < hi; q++ {
			q0 := q * R
			w := min(R, x-q0)
			panel := dst[q*kw*R : (q+1)*kw*R]
			if byRow {
				roundRows(t, src[q0*ld:], w, k, kw, ld, false)
				packTransposed(panel, t, kw, 0, w, 0, kw, R)
				clear(panel[k*R:])
				continue
			}
			if w < R {
				clear(panel[:k*R])
			}
			roundRows(panel, src[q0:], k, w, R, ld, false)
			clear(panel[k*R:])
		}
	}
	forRange(parallel, np, 1, run)
}
