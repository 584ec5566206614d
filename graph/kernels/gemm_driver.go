package kernels

import (
	"runtime"
	"sync"
	"unsafe"
)

// Cache blocking of the native SGEMM (Goto/BLIS loop order jc, pc, ic, jr,
// ir). Bᵀ is always packed into NR-wide panels; Aᵀ into MR-row panels and
// B into NR-wide panels when the product is wide and tall enough
// (sgemmSerial); otherwise they are read in place and only a last partial
// panel is packed.
const (
	kcBlock = 512  // depth of one pass (C is read and written once per pass)
	mcBlock = 448  // rows of A per pass (rounded to MR), unless the kernel sets its own
	ncBlock = 2048 // columns of B packed at once when transB
)

// minRowTiles is the fewest MR-row tiles a chunk of a row-split product
// takes, where there are enough for every core: a chunk of 96 rows (AVX2)
// reuses each packed B element 96 times, so packing B per chunk costs a few
// percent of the chunk's FMAs instead of ~15 % at 48 rows.
var minRowTiles = 16

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
		sgemmSerial(kern, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, ws, m, n)
		workspaces.Put(ws)
		return
	}
	mt := (m + kern.mr - 1) / kern.mr
	nt := (n + kern.nr - 1) / kern.nr
	if splitDepth && depthSplitPays(kern, m, n, k) {
		sgemmDepthSplit(kern, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	if mt >= nt {
		// Split rows: each chunk reads its own rows of A and all of B,
		// which it packs again (or streams from L3), so a chunk takes at
		// least minRowTiles row tiles unless that would idle a core.
		grain := splitGrain(mt, 4, 1)
		grain = max(grain, min(minRowTiles, splitGrain(mt, 1, 1))) * kern.mr
		shareB := grain <= sharedBMaxRows*kern.mr || depthStep(k)*min(n, ncBlock) >= sharedBMinFloats
		if sharePackedB && shareB && (transB || packNN && grain > 4*kern.mr && n > 4*kern.nr) {
			sgemmSharedB(kern, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, grain)
			return
		}
		parallelFor(m, grain, kern.mr, func(lo, hi int) {
			ws := workspaces.Get().(*workspace)
			aoff := lo * lda
			if transA {
				aoff = lo
			}
			sgemmSerial(kern, transA, transB, hi-lo, n, k, alpha, a[aoff:], lda, b, ldb, beta, c[lo*ldc:], ldc, ws, m, n)
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
		sgemmSerial(kern, transA, transB, m, hi-lo, k, alpha, a, lda, b[boff:], ldb, beta, c[lo:], ldc, ws, m, n)
		workspaces.Put(ws)
	})
}

// sgemmSerial is the blocked product on the calling goroutine.
//
// The depth blocks (kc, from kcBlock) fix the order in which each element
// of C is summed, so they are the same for every kernel and every split:
// results are bit-identical whatever the CPU's micro-kernel, the number of
// cores, whether A and B are packed and by whom (rowA and colA kernels run
// the same FMA sequence).
//
// Whether A and B are packed is decided by the whole product's rows and
// columns, wm×wn, of which this call may be a chunk: a narrow column chunk
// of a wide product reads A and B with the whole product's strides, so it
// packs them as the whole product would (reading them in place, every
// chunk would stride through the whole product's rows for a few columns).
func sgemmSerial(kern *gemmKernel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, ws *workspace, wm, wn int) {
	NR := kern.nr
	kstep := depthStep(k)
	packB := transB || packNN && wm > 4*kern.mr && wn > 4*NR
	if packB {
		ws.b = alignedFloats(ws.b, kstep*((min(n, ncBlock)+NR-1)/NR*NR))
	} else {
		ws.b = alignedFloats(ws.b, kstep*NR)
	}
	forDepthBlocks(k, beta, func(pc, kc int, be float32) {
		for jc := 0; jc < n; jc += ncBlock {
			nc := min(ncBlock, n-jc)
			if packB {
				packBBlock(ws.b, transB, b, ldb, jc, nc, pc, kc, NR, 0, (nc+NR-1)/NR)
			} else if nc%NR != 0 {
				jr := nc / NR * NR
				packBEdge(ws.b[:kc*NR], b, ldb, jc+jr, nc-jr, pc, kc, NR)
			}
			blockRows(kern, transA, m, wn, nc, kc, pc, jc, alpha, a, lda, b, ldb, packB, ws.b, be, c, ldc, ws)
		}
	})
}

// forDepthBlocks calls body for each depth block [pc, pc+kc) of a product
// of depth k, in order (depthStep wide), with the beta the block applies to
// C: beta for the first, 1 for the others, which add into C. These blocks
// alone fix the summation order of every element.
func forDepthBlocks(k int, beta float32, body func(pc, kc int, be float32)) {
	kstep := depthStep(k)
	for pc := 0; pc < k; pc += kstep {
		be := beta
		if pc > 0 {
			be = 1
		}
		body(pc, min(kstep, k-pc), be)
	}
}

// depthStep is the depth of each pass for a product of depth k: even
// blocks of at most kcBlock (k = 600 runs as 300+300, not 512+88).
func depthStep(k int) int {
	nkb := (k + kcBlock - 1) / kcBlock
	return (k + nkb - 1) / nkb
}

// packBBlock packs the NR-column panels [r0, r1) of columns [jc, jc+nc) ×
// depth [pc, pc+kc) of op(B) into dst, panel r at dst[r·NR·kc:].
func packBBlock(dst []float32, transB bool, b []float32, ldb, jc, nc, pc, kc, NR, r0, r1 int) {
	if transB {
		for r := r0; r < r1; r++ {
			jr := r * NR
			packBTrans(dst[jr*kc:(jr+NR)*kc], b, ldb, jc+jr, min(NR, nc-jr), pc, kc, NR)
		}
		return
	}
	lo, hi := r0*NR, min(r1*NR, nc)
	packBPanels(dst[lo*kc:], b, ldb, jc+lo, hi-lo, pc, kc, NR)
}

// blockRows runs one (depth pc, column jc) block for rows [0, m) of C:
// C[:, jc:jc+nc] = alpha·op(A)[:, pc:pc+kc]·op(B)[pc:pc+kc, jc:jc+nc] +
// be·C. With packedB, bpack holds the block's B panels; otherwise B is
// read in place and bpack holds the packed partial last panel, if any.
// n is the whole product's width (it decides whether A is packed).
func blockRows(kern *gemmKernel, transA bool, m, n, nc, kc, pc, jc int, alpha float32, a []float32, lda int, b []float32, ldb int, packedB bool, bpack []float32, be float32, c []float32, ldc int, ws *workspace) {
	MR, NR := kern.mr, kern.nr
	mc := max(kern.mcRows()/MR, 1) * MR
	// Packing A pays when it is reused over more than four column panels.
	packA := transA && packTransA && n > 4*NR
	if packA {
		ws.a = alignedFloats(ws.a, (min(mc, m)+MR-1)/MR*MR*kc)
	} else {
		ws.a = alignedFloats(ws.a, MR*kc)
	}
	for ic := 0; ic < m; ic += mc {
		mcb := min(mc, m-ic)
		mfull := mcb / MR * MR
		if packA {
			packAColPanels(ws.a, a, lda, ic, mcb, pc, kc, MR)
		} else if mfull < mcb {
			packAEdge(ws.a[:MR*kc], a, lda, transA, ic+mfull, mcb-mfull, pc, kc, MR)
		}
		for jr := 0; jr < nc; jr += NR {
			nr := min(NR, nc-jr)
			mask := uint64(1)<<uint(nr) - 1
			var bp *float32
			bs := NR
			switch {
			case packedB:
				bp = &bpack[jr*kc]
			case nr < NR:
				bp = &bpack[0]
			default:
				bp = &b[pc*ldb+jc+jr]
				bs = ldb
			}
			cp := ic*ldc + jc + jr
			if packA {
				for ir := 0; ir < mcb; ir += MR {
					kern.colA(kc, &ws.a[ir*kc], MR, bp, bs, &c[cp+ir*ldc], ldc, alpha, be, min(MR, mcb-ir), mask)
				}
				continue
			}
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

// sgemmSharedB is the row split of a product whose B is packed: for each
// (depth, column) block, the cores pack B's panels together into one
// shared buffer, then run their row chunks against it, so B is packed
// once per block instead of once per chunk (a weight gradient dYᵀ·X reads
// all of X, B·T rows, in every chunk). The packing of the next block rides
// at the end of this block's pass (parallel.ForThen), into the other of two
// buffers: one pass per block instead of two, and the packing fills the
// cores' last moments of the pass.
func sgemmSharedB(kern *gemmKernel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, grain int) {
	NR := kern.nr
	kstep := depthStep(k)
	type block struct {
		pc, kc, jc, nc int
		be             float32
	}
	var blocks []block
	forDepthBlocks(k, beta, func(pc, kc int, be float32) {
		for jc := 0; jc < n; jc += ncBlock {
			blocks = append(blocks, block{pc, kc, jc, min(ncBlock, n-jc), be})
		}
	})
	shared := workspaces.Get().(*workspace)
	defer workspaces.Put(shared)
	size := kstep * ((min(n, ncBlock) + NR - 1) / NR * NR)
	shared.b = alignedFloats(shared.b, 2*size)
	bufs := [2][]float32{shared.b[:size], shared.b[size:]}
	// packing cuts block i's packing into pieces for the cores: their count
	// and the function that packs one (none past the last block).
	packing := func(i int) (int, func(p int)) {
		if i >= len(blocks) {
			return 0, nil
		}
		bl := blocks[i]
		panels := (bl.nc + NR - 1) / NR
		per := splitGrain(panels, 2, 1)
		return (panels + per - 1) / per, func(p int) {
			packBBlock(bufs[i%2], transB, b, ldb, bl.jc, bl.nc, bl.pc, bl.kc, NR, p*per, min((p+1)*per, panels))
		}
	}
	first, packFirst := packing(0)
	parallelForThen(0, 1, 1, nil, first, packFirst) // the first block, alone
	for i, bl := range blocks {
		next, packNext := packing(i + 1)
		parallelForThen(m, grain, kern.mr, func(lo, hi int) {
			ws := workspaces.Get().(*workspace)
			aoff := lo * lda
			if transA {
				aoff = lo
			}
			blockRows(kern, transA, hi-lo, n, bl.nc, bl.kc, bl.pc, bl.jc, alpha, a[aoff:], lda, b, ldb, true, bufs[i%2], bl.be, c[lo*ldc:], ldc, ws)
			workspaces.Put(ws)
		}, next, packNext)
	}
}

// splitDepth, when set, lets a product with several depth blocks and few
// tiles of C per core split its depth blocks over the cores instead of C
// (sgemmDepthSplit). Tests set it and clear it to compare the two paths
// bit for bit.
var splitDepth = true

// depthSplitMaxTiles is the most MR×NR tiles of C per core for which a
// product splits its depth: with fewer, the row split's chunks are so small
// that the two synchronisations per depth block of sgemmSharedB (pack B,
// then multiply) cost a good part of each block's work (TINY's weight
// gradients: C 64×64 to 256×64 at depth 6400, 16–64 tiles a core on two).
var depthSplitMaxTiles = 128

// depthSplitMaxFloats bounds the partial products a depth split keeps, one
// m×n block for every depth block after the first: 32 MiB, ViT-S/16's
// widest weight gradient (fc2, 384×1536, 13 depth blocks) on many cores.
const depthSplitMaxFloats = 8 << 20

// depthSplitPays reports whether an m×n×k product splits its depth over
// the cores (sgemmDepthSplit) rather than its rows or columns: when it has
// several depth blocks and either C is small (at most depthSplitMaxTiles
// tiles a core) or C has too few rows for a row chunk of minRowTiles per
// core, where the column split would pack all of A again for every chunk
// (ViT-S/16's fc2 weight gradient on 16 cores: 32 chunks of 48 columns,
// each packing the whole 384×6304 A). Both need the partial products to fit depthSplitMaxFloats.
func depthSplitPays(kern *gemmKernel, m, n, k int) bool {
	workers := runtime.GOMAXPROCS(0)
	blocks := (k + depthStep(k) - 1) / depthStep(k)
	if workers < 2 || blocks < 2 || (blocks-1)*m*n > depthSplitMaxFloats {
		return false
	}
	mt, nt := (m+kern.mr-1)/kern.mr, (n+kern.nr-1)/kern.nr
	return mt*nt <= depthSplitMaxTiles*workers || mt < minRowTiles*workers
}

// sgemmDepthSplit is the split of a product whose C is small and whose
// depth is long (a weight gradient dYᵀ·X of few features over B·T rows):
// the cores share out (depth block, row tile) pieces, so that each reads
// its own part of A and B once and meets the others only twice, instead of
// twice per depth block. Depth block 0 goes into C with beta as in
// sgemmSerial; every later block d into a partial product P_d = alpha·A_d·B_d
// (beta 0, so P_d is the micro-kernel's alpha·acc, rounded once); then
// C += P_1, C += P_2, … in block order, each a single rounded add, as the
// kernel's beta = 1 epilogue (C = fma(1, C, alpha·acc)) does. The sums are
// therefore those of sgemmSerial bit for bit, on any number of cores.
func sgemmDepthSplit(kern *gemmKernel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	MR := kern.mr
	kstep := depthStep(k)
	blocks := (k + kstep - 1) / kstep
	mt := (m + MR - 1) / MR
	buf, part := borrowFloats((blocks - 1) * m * n)
	defer scratch.Put(buf)
	parallelFor(blocks*mt, mt, 1, func(lo, hi int) {
		ws := workspaces.Get().(*workspace)
		for t := lo; t < hi; {
			d, t0 := t/mt, t%mt
			t1 := min(mt, t0+hi-t)
			t += t1 - t0
			r0, r1 := t0*MR, min(t1*MR, m)
			pc := d * kstep
			aoff, boff := r0*lda+pc, pc*ldb
			if transA {
				aoff = pc*lda + r0
			}
			if transB {
				boff = pc
			}
			if d == 0 {
				sgemmSerial(kern, transA, transB, r1-r0, n, min(kstep, k-pc), alpha, a[aoff:], lda, b[boff:], ldb, beta, c[r0*ldc:], ldc, ws, m, n)
				continue
			}
			sgemmSerial(kern, transA, transB, r1-r0, n, min(kstep, k-pc), alpha, a[aoff:], lda, b[boff:], ldb, 0, part[(d-1)*m*n+r0*n:], n, ws, m, n)
		}
		workspaces.Put(ws)
	})
	parallelFor(m, splitGrain(m, 4, 8), 1, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row := c[i*ldc : i*ldc+n]
			for d := 1; d < blocks; d++ {
				addVec(row, part[(d-1)*m*n+i*n:][:n])
			}
		}
	})
}

// packTransA, when set, makes sgemmSerial pack each mc×kc block of a
// transposed A into contiguous MR-row panels before its products: read in
// place, A's rows (the depth) are lda apart, so a block's MR-wide columns
// touch kc cache lines each and, at strides such as 1536 floats, map onto a
// few cache sets. Tests clear it to compare the two paths bit for bit.
var packTransA = true

// packNN, when set, makes sgemmSerial pack B (stored k×n) into contiguous
// NR-column panels as it does Bᵀ: in place, a panel's kc rows are ldb
// apart, and at ldb = 384 or 1536 floats they fall on a few L1 and L2
// sets, so the panel the inner loop reuses is reloaded from L3.
var packNN = true

// sharePackedB, when set, makes a row-split product whose B is packed pack
// it once per block for all chunks (sgemmSharedB) instead of once per
// chunk. Tests clear it to compare the two paths bit for bit.
var sharePackedB = true

// sharedBMaxRows is the most MR-row tiles per chunk for which a row split
// shares its packed B. Repacking B costs each chunk about one move per
// element of B against 2·rows FLOPs per element: ~50 % extra at 96 rows (a
// weight gradient's chunks), ~5 % at 800 (the forward products, whose
// chunks then keep their own B panels in their own core's caches).
const sharedBMaxRows = 48

// sharedBMinFloats is the size of a packed B block (depth block × columns)
// from which a row split shares it whatever its chunks' rows: a block this
// large (768 KiB) exceeds the L2 of most AVX2 cores (256–512 KiB), so
// each chunk's private copy streams from L3 like the shared one does, and
// packing it per chunk only costs: ViT-S/16's forward products (X·Wᵀ, B
// 384×1152 and 384×1536) and its fc2 input gradient share theirs, while
// SMALL's (192×576, 442 KiB) still fit and keep their own copies
// (`go test -bench 'Sgemm/s16_(fwd|dX)' ./graph/kernels` compares them).
const sharedBMinFloats = 3 << 16

// packAColPanels packs rows [i0, i0+mr) × depth [p0, p0+kc) of op(A) = Aᵀ
// (A stored k×m) into dst as ⌈mr/MR⌉ panels of kc×MR floats, panel r
// holding op(A)(i0+r·MR+i, p0+p) at dst[r·kc·MR + p·MR + i], zero-padding
// the last panel's rows past mr.
func packAColPanels(dst, a []float32, lda, i0, mr, p0, kc, MR int) {
	packPanels(dst, a, lda, i0, mr, p0, kc, MR)
}

// packBTrans packs columns [j0, j0+nr) × depth [p0, p0+kc) of op(B) = Bᵀ
// (B stored n×k) into dst as kc rows of NR floats, zero-padding nr..NR.
func packBTrans(dst, b []float32, ldb, j0, nr, p0, kc, NR int) {
	packTransposed(dst, b, ldb, j0, nr, p0, kc, NR)
}

// packBPanels packs columns [j0, j0+nc) × depth [p0, p0+kc) of B (stored
// k×n) into dst as ⌈nc/NR⌉ panels of kc×NR floats, panel r holding
// B(p0+p, j0+r·NR+j) at dst[r·kc·NR + p·NR + j], zero-padding the last
// panel's columns past nc.
func packBPanels(dst, b []float32, ldb, j0, nc, p0, kc, NR int) {
	packPanels(dst, b, ldb, j0, nc, p0, kc, NR)
}

// packPanels cuts columns [c0, c0+n) × rows [p0, p0+kc) of a row-major
// matrix (row stride ld) into ⌈n/w⌉ panels of kc×w floats, panel r holding
// src(p0+p, c0+r·w+j) at dst[r·kc·w + p·w + j], zero-padding the last
// panel past n: the layout of both a transposed A's panels (w = MR) and a
// plain B's (w = NR). The AVX2 kernel's widths, 6 and 16, move their floats
// through registers instead of a memmove call each.
func packPanels(dst, src []float32, ld, c0, n, p0, kc, w int) {
	full := n / w * w
	done := packFullPanels(dst, src[p0*ld+c0:], ld, full/w, kc, w)
	for p := 0; p < kc; p++ {
		row := src[(p0+p)*ld+c0:]
		row = row[:n]
		d := dst[p*w:]
		switch {
		case done:
		case w == 6:
			for c := 0; c < full; c += 6 {
				dd, ss := d[c*kc:c*kc+6], row[c:c+6]
				dd[0], dd[1], dd[2], dd[3], dd[4], dd[5] = ss[0], ss[1], ss[2], ss[3], ss[4], ss[5]
			}
		case w == 16:
			for c := 0; c < full; c += 16 {
				dd, ss := d[c*kc:c*kc+16], row[c:c+16]
				for j := range 16 {
					dd[j] = ss[j]
				}
			}
		default:
			for c := 0; c < full; c += w {
				copy(d[c*kc:c*kc+w], row[c:c+w])
			}
		}
		if full < n {
			tail := d[full*kc : full*kc+w]
			copy(tail, row[full:])
			clear(tail[n-full:])
		}
	}
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
	// AVX2 8×8 transposes for whole blocks, then their depth tail in Go.
	i, pd := packTransBlocks(dst, R, src[r0*ld+c0:], ld, w, kc)
	for ii := 0; ii < i && pd < kc; ii++ {
		s := src[(r0+ii)*ld+c0:]
		for p := pd; p < kc; p++ {
			dst[p*R+ii] = s[p]
		}
	}
	// Eight rows at a time: each depth step p writes eight neighbouring
	// floats of one dst row, instead of one float in each of kc lines.
	for ; i+8 <= w; i += 8 {
		o := (r0+i)*ld + c0
		s0, s1, s2, s3 := src[o:o+kc], src[o+ld:o+ld+kc], src[o+2*ld:o+2*ld+kc], src[o+3*ld:o+3*ld+kc]
		s4, s5, s6, s7 := src[o+4*ld:o+4*ld+kc], src[o+5*ld:o+5*ld+kc], src[o+6*ld:o+6*ld+kc], src[o+7*ld:o+7*ld+kc]
		for p := range s0 {
			d := dst[p*R+i : p*R+i+8]
			d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7] = s0[p], s1[p], s2[p], s3[p], s4[p], s5[p], s6[p], s7[p]
		}
	}
	for ; i < w; i++ {
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
