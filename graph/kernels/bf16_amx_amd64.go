//go:build amd64 && !purego

package kernels

//go:generate go run gen_panels_asm.go

import (
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// The bfloat16 products on AMX tiles (TDPBF16PS), whose order is their
// definition (sgemmBF16Ref); the backend where the CPU has it (bf16Tiles).
// With dpTiles32 and dpPerm (pairTiles) the same driver runs VDPBF16PS.

//go:noescape
func amxTiles32(cfg *byte, a *uint16, lda int, b *uint32, kb int, c *float32, ldc int, nb int, pstride int, load int)

// amxState is whether this process may use the tiles: the CPU has
// AMX-TILE and AMX-BF16 (GODEBUG=cpu.amxbf16=off clears it), and
// AVX512_BF16 for the packing's conversions (every AMX CPU has it), and Linux
// granted the tile data state (arch_prctl ARCH_REQ_XCOMP_PERM, Linux 5.16
// and later).
var amxState struct {
	once sync.Once
	ok   bool
}

// amxCfg is the tile configuration: palette 1, tiles 0 to 7 of 16 rows
// of 64 bytes.
var amxCfg = func() (cfg [64]byte) {
	cfg[0] = 1
	for t := 0; t < 8; t++ {
		cfg[16+2*t] = 64
		cfg[48+t] = 16
	}
	return cfg
}()

// hasAMX reports whether the AMX kernel can run.
func hasAMX() bool {
	amxState.once.Do(func() {
		if !cpu.X86.HasAMXTile || !cpu.X86.HasAMXBF16 || !cpu.X86.HasAVX512BF16 {
			return
		}
		const archReqXcompPerm, xfeatureXTileData = 0x1023, 18
		_, _, errno := syscall.RawSyscall(syscall.SYS_ARCH_PRCTL, archReqXcompPerm, xfeatureXTileData, 0)
		amxState.ok = errno == 0
	})
	return amxState.ok
}

// sgemmBF16AMX computes a checked product (m, n, k > 0, alpha ≠ 0) on
// AMX: op(B) converted to 16-column panels of pairs, op(A) to bfloat16
// rows 32 at a time by the core that runs them (amxRows), both padded with
// zeros to whole tiles; each 32-row block runs over all of C's 32-column
// blocks in one call.
func sgemmBF16AMX(pt *pairTiles, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, parallel bool) {
	sgemmBF16AMXThen(pt, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, parallel, nil)
}

// sgemmBF16AMXThen is sgemmBF16AMX with epi, when not nil, run on each
// block of whole rows of C as it is finished (runAMX).
func sgemmBF16AMXThen(pt *pairTiles, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, parallel bool, epi func(i0, i1, j0, j1 int)) {
	src := &amxRows{transA: transA, m: m, k: k, a: a, lda: lda, perm: pt.perm}
	amxProduct(pt, src, BF16Operand{F: b, Ld: ldb}, transB, n, alpha, beta, c, ldc, parallel, epi)
}

// amxProduct is the body of sgemmBF16AMX: op(B)'s panels borrowed and
// packed (packOperandB), then the tiles run over op(A)'s rows, converted
// by the cores that run them.
func amxProduct(pt *pairTiles, src *amxRows, b BF16Operand, transB bool, n int, alpha, beta float32, c []float32, ldc int, parallel bool, epi func(i0, i1, j0, j1 int)) {
	m, k := src.m, src.k
	kw := (k + tileBlock - 1) / tileBlock * tileBlock // bfloat16 per row of A, padded
	npad := (n + 31) / 32 * 32
	par := parallel && m*n*k >= parallelMinWork
	nb := npad * kw / 2
	if !par && m > 0 && n > 0 && k > 0 && !pt.blocked(npad, kw) {
		// A small serial product (attention's, one per head): B's panels and
		// the row block's buffers in one pooled buffer, one Get and Put
		// instead of three or four.
		buf := borrowWords(nb + flatSpare(npad, kw))
		defer putWords(buf)
		bw := (*buf)[:nb]
		packOperandB(pt.perm, bw, transB, k, n, kw, npad, b, false)
		runAMXFlat(pt, nil, src, bw, m, n, k, alpha, beta, c, ldc, false, epi, (*buf)[nb:])
		return
	}
	bufB := borrowWords(nb)
	defer putWords(bufB)
	bw := *bufB
	packOperandB(pt.perm, bw, transB, k, n, kw, npad, b, par)
	runAMX(pt, nil, src, bw, m, n, k, alpha, beta, c, ldc, par, epi)
}

// flatSpare is the words a serial flatRun's buffers take (flatRun.spare):
// a float32 scratch of 32 rows of C and op(A)'s 32-row block.
func flatSpare(npad, kw int) int { return 32*npad + 32*kw/2 }

// packOperandB is packPanelsAMX for an operand of float32 values or
// bfloat16 words (stored, B's row j when transB: column j of op(B)).
func packOperandB(perm bool, dst []uint32, transB bool, k, n, kw, npad int, b BF16Operand, par bool) {
	switch {
	case b.W == nil:
		packPanelsAMX(perm, dst, transB, k, n, kw, npad, b.F, b.Ld, par)
	case transB:
		packColumns(perm, dst, k, n, kw, npad, b.W, b.Ld, par, rowsWords)
	default:
		packPairRows(perm, dst, k, n, kw, npad, b.W, b.Ld, par)
	}
}

// amxPackB sets dst (grown as needed) to op(B)'s AMX panels, as
// sgemmBF16AMX packs them, for amxRunPacked.
func amxPackB(pt *pairTiles, dst []uint32, transB bool, k, n int, b []float32, ldb int) []uint32 {
	kw := (k + tileBlock - 1) / tileBlock * tileBlock
	npad := (n + 31) / 32 * 32
	dst = growWords(dst, npad*kw/2)
	packPanelsAMX(pt.perm, dst, transB, k, n, kw, npad, b, ldb, n*k >= 1<<16)
	return dst
}

// amxRunPacked is sgemmBF16AMX with beta 0, A not transposed and op(B)
// packed by amxPackB; epi, when not nil, runs on each block of rows as it
// is finished (SgemmPackedThen's contract).
func amxRunPacked(pt *pairTiles, m, n, k int, alpha float32, a []float32, lda int, bw []uint32, c []float32, ldc int, par bool, epi func(i0, i1, j0, j1 int)) {
	src := &amxRows{m: m, k: k, a: a, lda: lda, perm: pt.perm}
	runAMX(pt, nil, src, bw, m, n, k, alpha, 0, c, ldc, par, epi)
}

// amxRunPackedWords is amxRunPacked with A's rows stored as bfloat16
// words (SgemmPackedThenWords).
func amxRunPackedWords(pt *pairTiles, m, n, k int, a []uint16, lda int, bw []uint32, c []float32, ldc int, par bool, epi func(i0, i1, j0, j1 int)) {
	src := &amxRows{m: m, k: k, w: a, lda: lda, perm: pt.perm}
	runAMX(pt, nil, src, bw, m, n, k, 1, 0, c, ldc, par, epi)
}

// sgemmBF16AMXOf is sgemmBF16AMX with each operand float32 values or
// bfloat16 words (A's words not transposed: SgemmBF16SerialOf checks).
func sgemmBF16AMXOf(pt *pairTiles, transA, transB bool, m, n, k int, alpha float32, a, b BF16Operand, beta float32, c []float32, ldc int, parallel bool) {
	src := &amxRows{transA: transA, m: m, k: k, a: a.F, w: a.W, lda: a.Ld, perm: pt.perm}
	amxProduct(pt, src, b, transB, n, alpha, beta, c, ldc, parallel, nil)
}

// amxRows is op(A) as sgemmBF16AMX's caller gave it, converted 32 rows
// at a time by the core that runs them.
type amxRows struct {
	transA bool
	m, k   int
	a      []float32
	lda    int
	w      []uint16 // when not nil: A (not transposed) already in bfloat16, row stride lda
	perm   bool     // each block of 32 of depth permuted by dpPerm (VDPBF16PS's tiles)
}

// amxReach is the most bytes of op(B)'s packed panels that one pass of
// the tiles reads for every 32 rows of A: three quarters of the L2 of a
// core of the CPUs that have AMX (2 MiB). A larger op(B) is taken
// amxDepthBlocks blocks of 32 depth by amxColBlocks blocks of 32 columns
// at a time (runAMXBlocked): 1 MiB of panels.
const (
	amxReach       = 3 << 19
	amxDepthBlocks = 32
	amxColBlocks   = 16
)

// blocked reports whether a product of depth kw (padded) and npad columns
// runs in passes (runAMXBlocked) rather than flat (runAMXFlat).
func (pt *pairTiles) blocked(npad, kw int) bool {
	if pt.flatDepth > 0 {
		return kw > pt.flatDepth
	}
	return 2*npad*kw > amxReach
}

// runAMX runs the tiles over the packed operands of sgemmBF16AMX: op(A)'s
// rows from ah, packed whole, or from src, converted block by block; then
// epi (when not nil) on each block of whole rows of C, on the goroutine
// that finished it.
func runAMX(pt *pairTiles, ah []uint16, src *amxRows, bw []uint32, m, n, k int, alpha, beta float32, c []float32, ldc int, par bool, epi func(i0, i1, j0, j1 int)) {
	kw := (k + tileBlock - 1) / tileBlock * tileBlock
	npad := (n + 31) / 32 * 32
	if pt.blocked(npad, kw) {
		runAMXBlocked(pt, ah, src, bw, m, n, k, alpha, beta, c, ldc, par, epi, planBlocked((m+31)/32, npad, pt.depthBlocks, amxColBlocks))
		return
	}
	runAMXFlat(pt, ah, src, bw, m, n, k, alpha, beta, c, ldc, par, epi, nil)
}

// runAMXFlat is runAMX for an op(B) within amxReach: each 32-row block of
// op(A), converted by the core that runs it, runs over all of C's 32-column
// blocks and the whole depth in one call. spare, when not nil, holds a
// serial run's buffers (flatSpare words; par must be false).
func runAMXFlat(pt *pairTiles, ah []uint16, src *amxRows, bw []uint32, m, n, k int, alpha, beta float32, c []float32, ldc int, par bool, epi func(i0, i1, j0, j1 int), spare []uint32) {
	kb := (k + tileBlock - 1) / tileBlock
	nb := (n + 31) / 32
	f := flatRun{pt: pt, ah: ah, bw: bw, m: m, n: n, k: k, kb: kb, kw: kb * tileBlock, nb: nb, npad: nb * 32,
		alpha: alpha, beta: beta, c: c, ldc: ldc, epi: epi}
	f.direct = alpha == 1 && beta == 0 && n == f.npad
	if src != nil {
		f.src, f.hasSrc = *src, true
	}
	f.spare = spare
	if mb := (m + 31) / 32; par {
		g := f // only this copy escapes to the cores, so a serial product allocates nothing here
		parallelFor(mb, splitGrain(mb, 4, 1), 1, g.run)
	} else {
		f.run(0, mb)
	}
}

// flatRun is runAMXFlat's work, run over op(A)'s 32-row blocks [lo, hi).
type flatRun struct {
	pt                        *pairTiles
	ah                        []uint16
	src                       amxRows // op(A)'s source when hasSrc: a copy, as the tiles' calls leak f's contents
	hasSrc                    bool
	bw                        []uint32
	m, n, k, kb, kw, nb, npad int
	alpha, beta               float32
	c                         []float32
	ldc                       int
	epi                       func(i0, i1, j0, j1 int)
	direct                    bool     // alpha 1, beta 0, whole column blocks: the tiles write C itself
	spare                     []uint32 // a serial run's buffers, flatSpare words; nil: pooled ones
}

func (f *flatRun) run(lo, hi int) {
	m, n, k, kw, npad := f.m, f.n, f.k, f.kw, f.npad
	pstride := 32 * kw // bytes from one 16-column panel to the next
	var scratch []float32
	var blockA []uint16
	if sp := f.spare; sp != nil { // flatSpare's layout: scratch, op(A)'s block
		scratch = unsafe.Slice((*float32)(unsafe.Pointer(&sp[0])), 32*npad)
		blockA = unsafe.Slice((*uint16)(unsafe.Pointer(&sp[32*npad])), 32*kw)
	} else {
		if !f.direct || hi*32 > m {
			buf := borrowWords(32 * npad)
			defer putWords(buf)
			scratch = unsafe.Slice((*float32)(unsafe.Pointer(&(*buf)[0])), 32*npad)
		}
		if f.hasSrc {
			buf := borrowWords(32 * kw / 2)
			defer putWords(buf)
			blockA = unsafe.Slice((*uint16)(unsafe.Pointer(&(*buf)[0])), 32*kw)
		}
	}
	for blk := lo; blk < hi; blk++ {
		i0 := blk * 32
		var rowsA []uint16
		if f.hasSrc {
			f.src.pack(blockA, i0, 0, k, kw)
			rowsA = blockA
		} else {
			rowsA = f.ah[i0*kw:]
		}
		if f.direct && i0+32 <= m {
			f.pt.run(&amxCfg[0], &rowsA[0], 2*kw, &f.bw[0], f.kb, &f.c[i0*f.ldc], 4*f.ldc, f.nb, pstride, 0, 32, depthSteps(k))
		} else {
			f.pt.run(&amxCfg[0], &rowsA[0], 2*kw, &f.bw[0], f.kb, &scratch[0], 4*npad, f.nb, pstride, 0, min(32, m-i0), depthSteps(k))
			epilogueRows(f.c[i0*f.ldc:], f.ldc, scratch, npad, min(32, m-i0), n, f.alpha, f.beta)
		}
		if f.epi != nil {
			f.epi(i0, min(i0+32, m), 0, n)
		}
	}
}

// runAMXBlocked is runAMX for an op(B) past amxReach, blocked as BLAS
// blocks a large product so that no operand is read from memory more than
// a few times. Each core takes a range of op(A)'s 32-row blocks and runs
// it on its own, with no wait for the other cores; the tiles run over
// passes of db blocks of 32 depth, starting from the sums so far, and
// the sums of a range's rows stay in L2 between passes (blockedSums):
//
//   - when C's rows are narrow (blockedRange), a range runs pass after
//     pass: it converts its rows for the pass's depth, then runs all of
//     C's columns, cb blocks of 32 at a time, over them;
//   - else each range (blockedRows rows) converts its rows for the whole
//     depth once, then runs the passes for each group of columns whose
//     sums fit.
//
// Then each range runs the epilogue and epi on its rows. The sums wait in
// C itself where they are the result (alpha 1, beta 0, whole tiles), else
// in a float32 buffer. Storing and reloading a tile changes no bit, and a
// tile's passes run in order of depth, so the sums are runAMX's.
func runAMXBlocked(pt *pairTiles, ah []uint16, rows *amxRows, bw []uint32, m, n, k int, alpha, beta float32, c []float32, ldc int, par bool, epi func(i0, i1, j0, j1 int), plan blockedPlan) {
	var src *amxRows
	if rows != nil {
		s := *rows // the closure below takes this copy, not the caller's
		src = &s
	}
	kb := (k + tileBlock - 1) / tileBlock
	kw := kb * tileBlock
	mb := (m + 31) / 32
	nb := (n + 31) / 32
	npad := nb * 32
	pstride := 32 * kw
	acc, lacc := c, ldc
	direct := alpha == 1 && beta == 0 && n == npad && m == mb*32
	if !direct {
		buf := borrowWords(mb * 32 * npad)
		defer putWords(buf)
		acc = unsafe.Slice((*float32)(unsafe.Pointer(&(*buf)[0])), mb*32*npad)
		lacc = npad
	}
	db, cb, perPass := plan.db, plan.cb, plan.perPass
	dw := kw // bfloat16 per row of a range's converted rows
	if perPass {
		dw = min(kb, db) * tileBlock
	}
	forRange(par, mb, plan.grain, func(lo, hi int) {
		a, la := ah[min(lo*32*kw, len(ah)):], kw // block lo's rows at a[0], la apart
		if src != nil {
			buf := borrowWords((hi - lo) * 32 * dw / 2)
			defer putWords(buf)
			a, la = unsafe.Slice((*uint16)(unsafe.Pointer(&(*buf)[0])), (hi-lo)*32*dw), dw
		}
		// convert sets a to the range's rows at depths d0 to d0+la.
		convert := func(d0 int) {
			if src == nil {
				return
			}
			if src.transA {
				packTransposedRows(a, la, src, lo*32, d0, min(la, k-d0))
				return
			}
			for blk := lo; blk < hi; blk++ {
				src.pack(a[(blk-lo)*32*la:(blk-lo+1)*32*la], blk*32, d0, min(la, k-d0), la)
			}
		}
		// tiles runs the columns j0 to j0+nc at the pass from depth block k0.
		tiles := func(j0, nc, k0 int) {
			kc := min(db, kb-k0)
			load := 0
			if k0 > 0 {
				load = 1
			}
			off := k0 * tileBlock // where the pass starts in a's rows
			if perPass && src != nil {
				off = 0
			}
			kq := 8 // steps in the pass's last block: all but in the product's last
			if k0+kc == kb {
				kq = depthSteps(k)
			}
			b := &bw[(2*j0*kb+k0)*256]
			for blk := lo; blk < hi; blk++ {
				pt.run(&amxCfg[0], &a[(blk-lo)*32*la+off], 2*la, b, kc, &acc[blk*32*lacc+j0*32], 4*lacc, nc, pstride, load, min(32, m-blk*32), kq)
			}
		}
		if perPass {
			for k0 := 0; k0 < kb; k0 += db {
				convert(k0 * tileBlock)
				for j0 := 0; j0 < nb; j0 += cb {
					tiles(j0, min(cb, nb-j0), k0)
				}
			}
		} else {
			convert(0)
			cg := min(cb, max(1, blockedSums/((hi-lo)*32*32)))
			for j0 := 0; j0 < nb; j0 += cg {
				for k0 := 0; k0 < kb; k0 += db {
					tiles(j0, min(cg, nb-j0), k0)
				}
			}
		}
		i0, i1 := lo*32, min(hi*32, m)
		if !direct {
			epilogueRows(c[i0*ldc:], ldc, acc[i0*npad:], npad, i1-i0, n, alpha, beta)
		}
		if epi != nil {
			epi(i0, i1, 0, n)
		}
	})
}

// The blocking of runAMXBlocked. blockedSums is the most float32 sums of
// C a core keeps between passes (384 KiB, within the 1 MiB L2 of the
// smallest core that runs it). A range of rows whose sums over all of C's
// columns fit, when they fit for blockedRange blocks of 32 rows or more,
// converts its rows pass by pass, into L2 just before the tiles read them.
// Otherwise a range takes blockedRows rows: each column block's part of
// op(B) is read once per range, and the range's converted rows once per
// group of columns, which with ranges and groups of about the same size
// (320 rows, 300 columns) reads the least.
const (
	blockedSums  = 96 << 10
	blockedRange = 8
	blockedRows  = 320
)

// blockedPlan is how runAMXBlocked runs a product.
type blockedPlan struct {
	db, cb  int  // blocks of 32 of depth per pass; at most cb blocks of 32 columns at a time
	perPass bool // a range converts its rows pass by pass, else for the whole depth at once
	grain   int  // blocks of 32 rows per range
}

// planBlocked is runAMXBlocked's plan for mb blocks of 32 rows of C and
// npad columns, in passes of db blocks of depth and groups of at most cb
// blocks of columns.
func planBlocked(mb, npad, db, cb int) blockedPlan {
	p := blockedPlan{db: db, cb: cb, grain: min(splitGrain(mb, 2, 1), blockedRows/32)}
	if narrow := blockedSums / (32 * npad); narrow >= blockedRange { // blocks whose sums over all columns fit
		p.perPass = true
		p.grain = min(p.grain, narrow)
	}
	return p
}

// epilogueRows is epilogueFTZ over rows of n: c[r·ldc + j] from
// acc[r·lacc + j], in one call (MXCSR set once).
func epilogueRows(c []float32, ldc int, acc []float32, lacc, rows, n int, alpha, beta float32) {
	_ = c[(rows-1)*ldc+n-1]
	_ = acc[(rows-1)*lacc+n-1]
	epilogueFTZAVX512(&c[0], ldc, &acc[0], lacc, rows, n, alpha, beta)
}

//go:noescape
func wordsBF16AVX512(dst *uint16, src *float32, n int)

// wordsBF16 sets dst[i] = ToBF16(src[i]) (AVX-512; AMX implies it).
func wordsBF16(dst []uint16, src []float32) {
	if len(src) > 0 {
		_ = dst[len(src)-1]
		wordsBF16AVX512(&dst[0], &src[0], len(src))
	}
}

//go:noescape
func rowsAVX512(dst *uint16, kw int, src unsafe.Pointer, lds, rows, k int, perm, words bool)

// rowsBF16 sets rows rows of dst, kw bfloat16 apart (kw a multiple of 32),
// to the rows of src, lds apart: their first k values rounded to bfloat16,
// then +0 up to kw, each block of 32 permuted by dpPerm when perm. It is
// the conversion, padding and permutation of a block of rows in one call
// (attention's products convert a few short rows at a time).
func rowsBF16(dst []uint16, kw int, src []float32, lds, rows, k int, perm bool) {
	if rowsFit(dst, kw, src, lds, rows, k) {
		rowsAVX512(&dst[0], kw, unsafe.Pointer(unsafe.SliceData(src)), lds, rows, k, perm, false)
	}
}

// rowsWords is rowsBF16 for rows already in bfloat16: the words copied.
func rowsWords(dst []uint16, kw int, src []uint16, lds, rows, k int, perm bool) {
	if rowsFit(dst, kw, src, lds, rows, k) {
		rowsAVX512(&dst[0], kw, unsafe.Pointer(unsafe.SliceData(src)), lds, rows, k, perm, true)
	}
}

// rowsFit reports whether rowsBF16 has a row to write, after checking
// (an index out of range) that dst and src hold every row it touches.
func rowsFit[E float32 | uint16](dst []uint16, kw int, src []E, lds, rows, k int) bool {
	if rows <= 0 || kw <= 0 {
		return false
	}
	_ = dst[rows*kw-1]
	if k > 0 {
		_ = src[(rows-1)*lds+k-1]
	}
	return true
}

// amxChunk is the pairs of depth converted at a time when op(A) is
// transposed, and the rows of B when op(B) is.
const amxChunk = 16

// pack sets dst (32 rows of kw bfloat16) to op(A)'s rows i0 to i0+32, at
// depths d0 to d0+k, rounded to bfloat16, padded with +0, and permuted by
// dpPerm when s.perm. A transposed A is transposed as it is converted
// (transposedRows).
func (s *amxRows) pack(dst []uint16, i0, d0, k, kw int) {
	rows := min(32, s.m-i0)
	a, lda := s.a, s.lda
	switch {
	case s.w != nil:
		clear(dst[rows*kw : 32*kw])
		rowsWords(dst, kw, s.w[i0*lda+d0:], lda, rows, k, s.perm)
	case !s.transA:
		clear(dst[rows*kw : 32*kw])
		rowsBF16(dst, kw, a[i0*lda+d0:], lda, rows, k, s.perm)
	default:
		transposedRows(dst[:32*kw], kw, a[d0*lda+i0:], lda, k, rows, s.perm)
	}
}

// packTransposedRows sets dst (32-row blocks of la bfloat16, la a
// multiple of 32) to a transposed op(A)'s rows i0 on, at depths d0 to
// d0+k, as amxRows.pack sets each block, all blocks at once.
func packTransposedRows(dst []uint16, la int, src *amxRows, i0, d0, k int) {
	cols := min(len(dst)/la, src.m-i0) // op(A)'s rows there
	transposedRows(dst, la, src.a[d0*src.lda+i0:], src.lda, k, cols, src.perm)
}

// transposedRows sets dst's rows (la bfloat16 apart, la a multiple of 32
// and at least k) to the columns of a (lda apart), the first cols of them,
// at depths (a's rows) 0 to k: dst[i·la + d] = ToBF16(a[d·lda + i]) for
// d < k, and +0 from k to la and in the rows from cols on; each block of
// 32 of depth is permuted by dpPerm when perm. The whole blocks of depth
// and the last part of one are read in place.
func transposedRows(dst []uint16, la int, a []float32, lda, k, cols int, perm bool) {
	rows := len(dst) / la
	cs := (cols + 15) &^ 15 // the rows transRowsAVX512 writes
	full, r := k/tileBlock, k%tileBlock
	kp := (k + tileBlock - 1) / tileBlock * tileBlock
	_ = a[(k-1)*lda+cols-1]
	_ = dst[(cs-1)*la+kp-1]
	var offs [3*tileBlock + 1]int
	transOffsets(&offs, 4*lda, r, perm)
	transRowsAVX512(&dst[0], la, &a[0], &offs, full, cols, r > 0)
	if kp < la {
		for i := 0; i < cs; i++ {
			clear(dst[i*la+kp : (i+1)*la])
		}
	}
	clear(dst[cs*la : rows*la])
}

// transOffsets sets offs to transRowsAVX512's table for rows ld bytes
// apart and a last block of r rows: offs[w] the offset of depth word w's
// row (dpPerm[w] when perm), offs[32] a block's; in the last block,
// offs[33+w] is whether w's row is among its r, offs[65+w] its offset,
// row 0's where it is not. (A masked load of a row past k can be slow even
// under a mask of 0: attention's packing ran 7 times slower in some
// processes on an AMD Zen 5 (AVX-512, AVX512_BF16); row 0's is read anyway.)
func transOffsets(offs *[3*tileBlock + 1]int, ld, r int, perm bool) {
	for w := 0; w < tileBlock; w++ {
		row := w
		if perm {
			row = dpPerm[w]
		}
		offs[w] = row * ld
		offs[tileBlock+1+w], offs[2*tileBlock+1+w] = -1, offs[w]
		if row >= r { // row 0 under a mask of 0: nothing past a's end is read
			offs[tileBlock+1+w], offs[2*tileBlock+1+w] = 0, 0
		}
	}
	offs[tileBlock] = tileBlock * ld
}

// packRowsAMX sets dst's rows (kw bfloat16 each, a whole number of 32-row
// blocks) to op(A)'s rows rounded to bfloat16, as amxRows.pack.
func packRowsAMX(perm bool, dst []uint16, transA bool, m, k, kw int, a []float32, lda int) {
	src := &amxRows{transA: transA, m: m, k: k, a: a, lda: lda, perm: perm}
	for i0 := 0; i0 < len(dst)/kw; i0 += 32 {
		src.pack(dst[i0*kw:(i0+32)*kw], i0, 0, k, kw)
	}
}

// packPanelsAMX sets dst to op(B)'s pairs in 16-column panels, panel p at
// dst[p·kw/2·16:], row r of it the pairs (B(2r, j), B(2r+1, j)); rows past
// k and columns past n are +0; a row's depth is permuted by dpPerm when
// perm.
func packPanelsAMX(perm bool, dst []uint32, transB bool, k, n, kw, npad int, b []float32, ldb int, parallel bool) {
	if !transB {
		packPairRows(perm, dst, k, n, kw, npad, b, ldb, parallel)
		return
	}
	packColumns(perm, dst, k, n, kw, npad, b, ldb, parallel, rowsBF16)
}

// packColumns sets dst to a transposed op(B)'s pairs in 16-column panels,
// as packPanelsAMX: conv sets a panel's 16 columns (B's rows j, stored:
// float32 values converted, or words copied; rowsBF16's contract) as rows
// of kw bfloat16, padded with +0 and permuted by dpPerm when perm, and the
// panel's columns are transposed into pairs.
func packColumns[E float32 | uint16](perm bool, dst []uint32, k, n, kw, npad int, b []E, ldb int, parallel bool, conv func(dst []uint16, kw int, src []E, lds, rows, k int, perm bool)) {
	pc := colPanels[E]{perm: perm, dst: dst, k: k, n: n, kw: kw, b: b, ldb: ldb, conv: conv}
	if np := npad / 16; parallel {
		q := pc // only this copy escapes to the cores, so a serial call allocates nothing here
		parallelFor(np, 1, 1, q.run)
	} else {
		pc.run(0, np)
	}
}

// colPanels is packColumns' work, run over panels [lo, hi).
type colPanels[E float32 | uint16] struct {
	perm          bool
	dst           []uint32
	k, n, kw, ldb int
	b             []E
	conv          func(dst []uint16, kw int, src []E, lds, rows, k int, perm bool)
}

func (pc *colPanels[E]) run(lo, hi int) {
	kw := pc.kw
	kp := kw / 2
	buf := borrowWords(amxChunk * kw / 2)
	defer putWords(buf)
	tw := *buf
	tmp := unsafe.Slice((*uint16)(unsafe.Pointer(&tw[0])), len(tw)*2)
	for p := lo; p < hi; p++ {
		cols := max(0, min(16, pc.n-p*16))
		if cols > 0 {
			pc.conv(tmp, kw, pc.b[p*16*pc.ldb:], pc.ldb, cols, pc.k, pc.perm)
		}
		clear(tmp[cols*kw : 16*kw])
		panel := pc.dst[p*kp*16 : (p+1)*kp*16]
		for r := 0; r < kp; r += 16 {
			transpose16AVX512(&panel[r*16], 16, &tw[r], kp)
		}
	}
}

// packPairRows sets dst to a non-transposed op(B)'s pairs in 16-column
// panels, as packPanelsAMX, from b's rows (float32 values or bfloat16
// words, row stride ldb), a block of 32 rows of depth at a time
// (pairPanelsAVX512); panels past n's are cleared here.
func packPairRows[E float32 | uint16](perm bool, dst []uint32, k, n, kw, npad int, b []E, ldb int, parallel bool) {
	_ = b[(k-1)*ldb+n-1]
	kp, used := kw/2, (n+15)/16
	_ = dst[(used-1)*kp*16+kp*16-1]
	pr := pairRows[E]{perm: perm, dst: dst, k: k, n: n, kp: kp, b: b, ldb: ldb}
	if kb := kw / tileBlock; parallel {
		q := pr // only this copy escapes to the cores, so a serial call allocates nothing
		parallelFor(kb, 4, 1, q.run)
	} else {
		pr.run(0, kb)
	}
	clear(dst[used*kp*16 : npad/16*kp*16])
}

// pairRows is packPairRows' work, run over blocks of 32 of depth [lo, hi).
type pairRows[E float32 | uint16] struct {
	perm          bool
	dst           []uint32
	k, n, kp, ldb int
	b             []E
}

func (p *pairRows[E]) run(lo, hi int) {
	var e E
	size := int(unsafe.Sizeof(e))
	full := p.k / tileBlock
	var offs [3*tileBlock + 1]int
	transOffsets(&offs, size*p.ldb, p.k%tileBlock, p.perm)
	pairPanelsAVX512(&p.dst[lo*tileBlock/2*16], 4*p.kp*16, unsafe.Pointer(&p.b[lo*tileBlock*p.ldb]), &offs, min(hi, full)-lo, p.n, hi > full, size == 2)
}

//go:noescape
func pairPanelsAVX512(dst *uint32, pstride int, b unsafe.Pointer, offs *[3*tileBlock + 1]int, blocks, cols int, last, words bool)

//go:noescape
func transRowsAVX512(dst *uint16, la int, a *float32, offs *[3*tileBlock + 1]int, blocks, cols int, last bool)

//go:noescape
func transpose16AVX512(dst *uint32, ldd int, src *uint32, lds int)
