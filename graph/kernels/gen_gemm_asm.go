//go:build ignore

// gen_gemm_asm.go writes gemm_kernel_amd64.s, the SGEMM register-tile
// micro-kernels and the AVX-512 transposing pack. Run it with `go generate` (see gemm_kernel_amd64.go).
//
// Every kernel computes one MR×NR tile of C:
//
//	C[i, j] = alpha·Σ_p A(i, p)·B(p, j) + beta·C[i, j]   (i < mr, mask bit j set)
//
// over kc steps p. B(p, ·) is NR contiguous floats at b + p·bs. A is read in
// place in one of two layouts: "rowA" kernels read A(i, p) at a + i·as + p
// (row-major A, no transpose), "colA" kernels read it at a + i + p·as (a
// transposed A, or a packed panel with as = MR). When beta == 0, C is not read.
package main

import (
	"bytes"
	"fmt"
	"log"
	"os"
	"strings"
)

type kernel struct {
	isa  string // "avx2" or "avx512"
	mr   int    // rows of the tile
	nv   int    // vectors per row; NR = nv·width
	rowA bool   // A layout, see the file comment
	// ftz runs the kernel with MXCSR set to DAZ, FTZ and round to nearest
	// even (restored before it returns): the bfloat16 products' emulation
	// (bf16_emul.go) on the widened operands.
	ftz bool
}

func (k kernel) width() int {
	if k.isa == "avx512" {
		return 16
	}
	return 8
}

func (k kernel) nr() int { return k.nv * k.width() }

func (k kernel) name() string {
	layout := "ColA"
	if k.rowA {
		layout = "RowA"
	}
	ftz := ""
	if k.ftz {
		ftz = "FTZ"
	}
	return fmt.Sprintf("sgemm%dx%d%s%s%s", k.mr, k.nr(), strings.ToUpper(k.isa), layout, ftz)
}

// Kernels emitted: the register budget is mr·nv accumulators + nv B vectors
// + 1 broadcast (+ 2 scratch in the epilogue) ≤ 16 (AVX2) or 32 (AVX-512).
var kernels = []kernel{
	{"avx512", 14, 2, true, false}, {"avx512", 14, 2, false, false},
	{"avx2", 6, 2, true, false}, {"avx2", 6, 2, false, false},
	{"avx512", 14, 2, true, true}, {"avx512", 14, 2, false, true},
	{"avx2", 6, 2, true, true}, {"avx2", 6, 2, false, true},
}

type gen struct{ b bytes.Buffer }

func (g *gen) p(format string, args ...any) { fmt.Fprintf(&g.b, format+"\n", args...) }

func (k kernel) vreg(i int) string {
	if k.isa == "avx512" {
		return fmt.Sprintf("Z%d", i)
	}
	return fmt.Sprintf("Y%d", i)
}

func (k kernel) acc(i, v int) string { return k.vreg(i*k.nv + v) }

// rowAddr returns, for rowA kernels, a base register and a scaled-index
// suffix for row i, given base registers at the row offsets in bases.
// Stride register R8 = as·4 bytes, R9 = 3·R8.
func rowAddr(i int, bases []int, baseRegs []string) (string, string) {
	mults := []struct {
		m   int
		idx string
	}{{0, ""}, {1, "(R8*1)"}, {2, "(R8*2)"}, {4, "(R8*4)"}, {8, "(R8*8)"}, {3, "(R9*1)"}, {6, "(R9*2)"}, {12, "(R9*4)"}, {24, "(R9*8)"}}
	for bi, off := range bases {
		for _, m := range mults {
			if off+m.m == i {
				return baseRegs[bi], m.idx
			}
		}
	}
	panic("no address")
}

func rowBases(mr int) []int {
	covered := map[int]bool{}
	var bases []int
	for i := 0; i < mr; i++ {
		if covered[i] {
			continue
		}
		bases = append(bases, i)
		for _, m := range []int{0, 1, 2, 3, 4, 6, 8, 12, 24} {
			covered[i+m] = true
		}
	}
	return bases
}

func (g *gen) kernel(k kernel) {
	w := k.width()
	vbytes := w * 4
	nacc := k.mr * k.nv
	breg := func(v int) string { return k.vreg(nacc + v) }
	areg := k.vreg(nacc + k.nv)
	if nacc+k.nv+1 > map[string]int{"avx2": 16, "avx512": 32}[k.isa] {
		log.Fatalf("%s: too many registers", k.name())
	}
	baseRegs := []string{"SI", "R10", "R11"}
	var bases []int
	if k.rowA {
		bases = rowBases(k.mr)
		if len(bases) > len(baseRegs) {
			log.Fatalf("%s: too many row bases", k.name())
		}
	}

	g.p("// func %s(kc int, a *float32, as int, b *float32, bs int, c *float32, ldc int, alpha, beta float32, mr int, mask uint64)", k.name())
	if k.ftz {
		// MXCSR: DAZ and FTZ set, rounding to nearest (SETFTZ,
		// ftz_amd64.h); the caller's value is restored at done.
		g.p("TEXT ·%s(SB), NOSPLIT, $8-80", k.name())
		g.p("\tSETFTZ")
	} else {
		g.p("TEXT ·%s(SB), NOSPLIT, $0-80", k.name())
	}
	g.p("\tMOVQ kc+0(FP), CX")
	g.p("\tMOVQ a+8(FP), SI")
	g.p("\tMOVQ as+16(FP), R8")
	g.p("\tSHLQ $2, R8")
	g.p("\tMOVQ b+24(FP), DX")
	g.p("\tMOVQ bs+32(FP), DI")
	g.p("\tSHLQ $2, DI")
	if k.rowA {
		g.p("\tLEAQ (R8)(R8*2), R9")
		for bi := 1; bi < len(bases); bi++ {
			g.p("\tIMUL3Q $%d, R8, AX", bases[bi])
			g.p("\tLEAQ (SI)(AX*1), %s", baseRegs[bi])
		}
	}
	// Prefetch the C tile: its rows are far apart and it is read (or
	// written) only after the k loop.
	g.p("\tMOVQ c+40(FP), BX")
	g.p("\tMOVQ ldc+48(FP), R12")
	g.p("\tSHLQ $2, R12")
	for i := 0; i < k.mr; i++ {
		g.p("\tPREFETCHT0 (BX)")
		g.p("\tPREFETCHT0 %d(BX)", k.nr()*4-1)
		if i+1 < k.mr {
			g.p("\tADDQ R12, BX")
		}
	}
	for i := 0; i < nacc; i++ {
		r := k.vreg(i)
		if k.isa == "avx512" {
			g.p("\tVPXORD %s, %s, %s", r, r, r)
		} else {
			g.p("\tVXORPS %s, %s, %s", r, r, r)
		}
	}
	// step emits one k step; u is the unroll slot (rowA byte displacement u·4).
	step := func(u int) {
		for v := 0; v < k.nv; v++ {
			g.p("\tVMOVUPS %d(DX), %s", v*vbytes, breg(v))
		}
		g.p("\tADDQ DI, DX")
		for i := 0; i < k.mr; i++ {
			var addr string
			if k.rowA {
				base, idx := rowAddr(i, bases, baseRegs)
				addr = fmt.Sprintf("%d(%s)%s", u*4, base, idx)
			} else {
				addr = fmt.Sprintf("%d(SI)", i*4)
			}
			g.p("\tVBROADCASTSS %s, %s", addr, areg)
			for v := 0; v < k.nv; v++ {
				g.p("\tVFMADD231PS %s, %s, %s", breg(v), areg, k.acc(i, v))
			}
		}
		if !k.rowA {
			g.p("\tADDQ R8, SI")
		}
	}
	const unroll = 4
	g.p("\tMOVQ CX, AX")
	g.p("\tSHRQ $2, AX")
	g.p("\tANDQ $3, CX")
	g.p("\tTESTQ AX, AX")
	g.p("\tJZ tail")
	g.p("loop4:")
	for u := 0; u < unroll; u++ {
		step(u)
	}
	if k.rowA {
		for bi := range bases {
			g.p("\tADDQ $%d, %s", unroll*4, baseRegs[bi])
		}
	}
	g.p("\tDECQ AX")
	g.p("\tJNZ loop4")
	g.p("tail:")
	g.p("\tTESTQ CX, CX")
	g.p("\tJZ epilogue")
	g.p("loop1:")
	step(0)
	if k.rowA {
		for bi := range bases {
			g.p("\tADDQ $4, %s", baseRegs[bi])
		}
	}
	g.p("\tDECQ CX")
	g.p("\tJNZ loop1")

	g.p("epilogue:")
	// Scale by alpha, in place.
	alpha := k.vreg(nacc + k.nv) // reuse the broadcast register
	g.p("\tVBROADCASTSS alpha+56(FP), %s", alpha)
	for i := 0; i < nacc; i++ {
		g.p("\tVMULPS %s, %s, %s", alpha, k.vreg(i), k.vreg(i))
	}
	g.p("\tMOVQ c+40(FP), BX")
	g.p("\tMOVQ ldc+48(FP), R12")
	g.p("\tSHLQ $2, R12")
	g.p("\tMOVQ mr+64(FP), R13")
	g.p("\tMOVL beta+60(FP), AX")
	g.p("\tANDL $0x7fffffff, AX")
	if k.isa == "avx512" {
		g.p("\tMOVQ mask+72(FP), CX")
		for v := 0; v < k.nv; v++ {
			g.p("\tKMOVW CX, K%d", v+1)
			if v+1 < k.nv {
				g.p("\tSHRQ $16, CX")
			}
		}
		beta := k.vreg(nacc + k.nv + 1)
		tmp := breg(0)
		g.p("\tTESTL AX, AX")
		g.p("\tJZ store0")
		g.p("\tVBROADCASTSS beta+60(FP), %s", beta)
		g.rows(k, func(i int) {
			for v := 0; v < k.nv; v++ {
				g.p("\tVMOVUPS.Z %d(BX), K%d, %s", v*vbytes, v+1, tmp)
				g.p("\tVFMADD231PS %s, %s, %s", beta, tmp, k.acc(i, v))
				g.p("\tVMOVUPS %s, K%d, %d(BX)", k.acc(i, v), v+1, v*vbytes)
			}
		})
		g.p("store0:")
		g.rows(k, func(i int) {
			for v := 0; v < k.nv; v++ {
				g.p("\tVMOVUPS %s, K%d, %d(BX)", k.acc(i, v), v+1, v*vbytes)
			}
		})
	} else {
		// AVX2: an unmasked path for full tiles, VMASKMOVPS for edges.
		beta := k.vreg(nacc + k.nv)
		tmp := k.vreg(15)
		full := uint64(1)<<k.nr() - 1
		g.p("\tMOVQ mask+72(FP), CX")
		g.p("\tMOVQ $0x%x, DX", full)
		g.p("\tCMPQ CX, DX")
		g.p("\tJNE masked")
		g.p("\tTESTL AX, AX")
		g.p("\tJZ full0")
		g.p("\tVBROADCASTSS beta+60(FP), %s", beta)
		g.rows(k, func(i int) {
			for v := 0; v < k.nv; v++ {
				g.p("\tVMOVUPS %d(BX), %s", v*vbytes, tmp)
				g.p("\tVFMADD231PS %s, %s, %s", beta, tmp, k.acc(i, v))
				g.p("\tVMOVUPS %s, %d(BX)", k.acc(i, v), v*vbytes)
			}
		})
		g.p("full0:")
		g.rows(k, func(i int) {
			for v := 0; v < k.nv; v++ {
				g.p("\tVMOVUPS %s, %d(BX)", k.acc(i, v), v*vbytes)
			}
		})
		g.p("masked:")
		if k.nv > 2 {
			log.Fatalf("%s: AVX2 masks support nv ≤ 2", k.name())
		}
		masks := []string{breg(0), breg(1)}
		for v := 0; v < k.nv; v++ {
			g.p("\tVPBROADCASTD mask+72(FP), %s", masks[v])
			g.p("\tVPAND lanebits<>+%d(SB), %s, %s", v*32, masks[v], masks[v])
			g.p("\tVPCMPEQD lanebits<>+%d(SB), %s, %s", v*32, masks[v], masks[v])
		}
		g.p("\tTESTL AX, AX")
		g.p("\tJZ masked0")
		g.p("\tVBROADCASTSS beta+60(FP), %s", beta)
		g.rows(k, func(i int) {
			for v := 0; v < k.nv; v++ {
				g.p("\tVMASKMOVPS %d(BX), %s, %s", v*vbytes, masks[v], tmp)
				g.p("\tVFMADD231PS %s, %s, %s", beta, tmp, k.acc(i, v))
				g.p("\tVMASKMOVPS %s, %s, %d(BX)", k.acc(i, v), masks[v], v*vbytes)
			}
		})
		g.p("masked0:")
		g.rows(k, func(i int) {
			for v := 0; v < k.nv; v++ {
				g.p("\tVMASKMOVPS %s, %s, %d(BX)", k.acc(i, v), masks[v], v*vbytes)
			}
		})
	}
	g.p("done:")
	if k.ftz {
		g.p("\tRESTOREFTZ")
	}
	g.p("\tVZEROUPPER")
	g.p("\tRET")
	g.p("")
}

// rows emits body(i) for each row i < mr, advancing BX by ldc and leaving
// early (to done) once mr rows are stored. BX is restored from c first.
func (g *gen) rows(k kernel, body func(i int)) {
	g.p("\tMOVQ c+40(FP), BX")
	for i := 0; i < k.mr; i++ {
		if i > 0 {
			g.p("\tCMPQ R13, $%d", i)
			g.p("\tJLE done")
			g.p("\tADDQ R12, BX")
		}
		body(i)
	}
	g.p("\tJMP done")
}

// packTrans emits packTransAVX512: a transposing pack through 16×16
// in-register transposes (unpck ps, unpck pd, two 128-bit lane shuffles).
//
//	dst[p·ds + j] = src[j·ss + p]  (j < valid), 0 (valid ≤ j < width ≤ 32), p < kc
func (g *gen) packTrans() {
	g.p("// func packTransAVX512(dst *float32, ds int, src *float32, ss int, valid, width, kc int)")
	g.p("TEXT ·packTransAVX512(SB), NOSPLIT, $0-56")
	g.p("\tMOVQ dst+0(FP), DI")
	g.p("\tMOVQ ds+8(FP), R8")
	g.p("\tSHLQ $2, R8")
	g.p("\tMOVQ src+16(FP), SI")
	g.p("\tMOVQ ss+24(FP), R9")
	g.p("\tSHLQ $2, R9")
	g.p("\tMOVQ valid+32(FP), R10")
	g.p("\tMOVQ width+40(FP), R11")
	g.p("\tMOVQ kc+48(FP), CX")
	g.p("\tXORQ R12, R12 // h·16: first column of this half")
	g.p("half:")
	g.p("\tCMPQ R12, R11")
	g.p("\tJGE done")
	// vr = clamp(valid − h16, 0, 16) in R13; store mask K6 from width − h16.
	g.p("\tMOVQ R10, R13")
	g.p("\tSUBQ R12, R13")
	g.p("\tMOVQ R11, AX")
	g.p("\tSUBQ R12, AX")
	g.p("\tCMPQ AX, $16")
	g.p("\tJLE wok")
	g.p("\tMOVQ $16, AX")
	g.p("wok:")
	g.p("\tMOVQ $1, BX")
	g.p("\tSHLXQ AX, BX, BX")
	g.p("\tDECQ BX")
	g.p("\tKMOVW BX, K6")
	g.p("\tXORQ R14, R14 // p0")
	g.p("block:")
	g.p("\tCMPQ R14, CX")
	g.p("\tJGE nexthalf")
	// pr = min(16, kc − p0) in R15; K7 = (1<<pr) − 1.
	g.p("\tMOVQ CX, R15")
	g.p("\tSUBQ R14, R15")
	g.p("\tCMPQ R15, $16")
	g.p("\tJLE pok")
	g.p("\tMOVQ $16, R15")
	g.p("pok:")
	g.p("\tMOVQ $1, BX")
	g.p("\tSHLXQ R15, BX, BX")
	g.p("\tDECQ BX")
	g.p("\tKMOVW BX, K7")
	// BX = src + h16·ss + p0·4: row r of this block at BX + r·ss.
	g.p("\tMOVQ R12, BX")
	g.p("\tIMULQ R9, BX")
	g.p("\tADDQ SI, BX")
	g.p("\tLEAQ (BX)(R14*4), BX")
	for r := 0; r < 16; r++ {
		g.p("\tCMPQ R13, $%d", r)
		g.p("\tJLE zero%d", r)
		g.p("\tVMOVUPS.Z (BX), K7, Z%d", r)
		if r < 15 {
			g.p("\tADDQ R9, BX")
		}
	}
	g.p("\tJMP transpose")
	for r := 0; r < 16; r++ {
		g.p("zero%d:", r)
		g.p("\tVPXORD Z%d, Z%d, Z%d", r, r, r)
	}
	g.p("transpose:")
	z := func(i int) string { return fmt.Sprintf("Z%d", i) }
	t := func(i int) string { return fmt.Sprintf("Z%d", 16+i) }
	for i := 0; i < 16; i += 2 {
		g.p("\tVUNPCKLPS %s, %s, %s", z(i+1), z(i), t(i))
		g.p("\tVUNPCKHPS %s, %s, %s", z(i+1), z(i), t(i+1))
	}
	for i := 0; i < 16; i += 4 {
		g.p("\tVUNPCKLPD %s, %s, %s", t(i+2), t(i), z(i))
		g.p("\tVUNPCKHPD %s, %s, %s", t(i+2), t(i), z(i+1))
		g.p("\tVUNPCKLPD %s, %s, %s", t(i+3), t(i+1), z(i+2))
		g.p("\tVUNPCKHPD %s, %s, %s", t(i+3), t(i+1), z(i+3))
	}
	for _, b := range []int{0, 8} {
		for i := 0; i < 4; i++ {
			g.p("\tVSHUFF32X4 $0x88, %s, %s, %s", z(b+i+4), z(b+i), t(b+i))
			g.p("\tVSHUFF32X4 $0xdd, %s, %s, %s", z(b+i+4), z(b+i), t(b+i+4))
		}
	}
	for i := 0; i < 8; i++ {
		g.p("\tVSHUFF32X4 $0x88, %s, %s, %s", t(i+8), t(i), z(i))
		g.p("\tVSHUFF32X4 $0xdd, %s, %s, %s", t(i+8), t(i), z(i+8))
	}
	// Store column i (p = p0 + i) for i < pr at dst + (p0+i)·ds + h16·4.
	g.p("\tMOVQ R14, BX")
	g.p("\tIMULQ R8, BX")
	g.p("\tADDQ DI, BX")
	g.p("\tLEAQ (BX)(R12*4), BX")
	for i := 0; i < 16; i++ {
		if i > 0 {
			g.p("\tCMPQ R15, $%d", i)
			g.p("\tJLE stored")
			g.p("\tADDQ R8, BX")
		}
		g.p("\tVMOVUPS Z%d, K6, (BX)", i)
	}
	g.p("stored:")
	g.p("\tADDQ $16, R14")
	g.p("\tJMP block")
	g.p("nexthalf:")
	g.p("\tADDQ $16, R12")
	g.p("\tJMP half")
	g.p("done:")
	g.p("\tVZEROUPPER")
	g.p("\tRET")
	g.p("")
}

// packPanels emits packPanelsAVX2: the non-transposing panel pack of a
// transposed A (w = MR = 6) or a plain B (w = NR = 16), full panels only,
// prefetching the source row four rows ahead (a weight gradient's A block
// is a short strip of each of kc rows lda apart, which the hardware
// prefetchers do not follow across pages).
//
//	dst[c·kc·w + p·w + j] = src[p·ld + c·w + j]  (c < panels, p < kc, j < w)
func (g *gen) packPanels() {
	g.p("// func packPanelsAVX2(dst *float32, src *float32, ld, panels, kc, w int)")
	g.p("TEXT ·packPanelsAVX2(SB), NOSPLIT, $0-48")
	g.p("\tMOVQ dst+0(FP), DI")
	g.p("\tMOVQ src+8(FP), SI")
	g.p("\tMOVQ ld+16(FP), R8")
	g.p("\tSHLQ $2, R8")
	g.p("\tMOVQ panels+24(FP), R9")
	g.p("\tMOVQ kc+32(FP), CX")
	g.p("\tMOVQ w+40(FP), R11")
	g.p("\tMOVQ CX, R10")
	g.p("\tIMULQ R11, R10")
	g.p("\tSHLQ $2, R10 // panel stride in bytes: kc·w·4")
	g.p("\tSHLQ $2, R11 // w·4")
	g.p("\tTESTQ CX, CX")
	g.p("\tJZ pdone")
	g.p("\tTESTQ R9, R9")
	g.p("\tJZ pdone")
	g.p("\tCMPQ R11, $64")
	g.p("\tJEQ prow16")
	g.p("\tCMPQ R11, $24")
	g.p("\tJEQ prow6")
	g.p("\tJMP pdone")
	for _, w := range []int{16, 6} {
		g.p("prow%d:", w)
		g.p("\tMOVQ SI, BX")
		g.p("\tMOVQ DI, DX")
		g.p("\tMOVQ R9, AX")
		g.p("pcol%d:", w)
		g.p("\tPREFETCHT0 (BX)(R8*4)")
		if w == 16 {
			g.p("\tVMOVUPS (BX), Y0")
			g.p("\tVMOVUPS 32(BX), Y1")
			g.p("\tVMOVUPS Y0, (DX)")
			g.p("\tVMOVUPS Y1, 32(DX)")
		} else {
			g.p("\tVMOVUPS (BX), X0")
			g.p("\tVMOVSD 16(BX), X1")
			g.p("\tVMOVUPS X0, (DX)")
			g.p("\tVMOVSD X1, 16(DX)")
		}
		g.p("\tADDQ $%d, BX", 4*w)
		g.p("\tADDQ R10, DX")
		g.p("\tDECQ AX")
		g.p("\tJNZ pcol%d", w)
		g.p("\tADDQ R8, SI")
		g.p("\tADDQ R11, DI")
		g.p("\tDECQ CX")
		g.p("\tJNZ prow%d", w)
		g.p("\tJMP pdone")
	}
	g.p("pdone:")
	g.p("\tVZEROUPPER")
	g.p("\tRET")
	g.p("")
}

// packTrans8 emits packTrans8AVX2: the transposing pack in 8×8 blocks
// through registers (unpck ps, shuf ps, 128-bit lane permutes), for
// blocks·8 source rows and kc8·8 depth steps; the caller packs the rest.
//
//	dst[p·ds + j] = src[j·ss + p]  (j < 8·blocks, p < 8·kc8)
func (g *gen) packTrans8() {
	g.p("// func packTrans8AVX2(dst *float32, ds int, src *float32, ss int, blocks, kc8 int)")
	g.p("TEXT ·packTrans8AVX2(SB), NOSPLIT, $0-48")
	g.p("\tMOVQ dst+0(FP), DI")
	g.p("\tMOVQ ds+8(FP), R8")
	g.p("\tSHLQ $2, R8")
	g.p("\tMOVQ src+16(FP), SI")
	g.p("\tMOVQ ss+24(FP), R9")
	g.p("\tSHLQ $2, R9")
	g.p("\tMOVQ blocks+32(FP), AX")
	g.p("\tMOVQ kc8+40(FP), R10")
	g.p("\tLEAQ (R9)(R9*2), R12 // 3·ss")
	g.p("\tLEAQ (R8)(R8*2), R14 // 3·ds")
	g.p("\tTESTQ AX, AX")
	g.p("\tJZ tdone")
	g.p("\tTESTQ R10, R10")
	g.p("\tJZ tdone")
	g.p("tblock:")
	g.p("\tMOVQ SI, BX")
	g.p("\tMOVQ DI, DX")
	g.p("\tMOVQ R10, CX")
	g.p("tstep:")
	g.p("\tLEAQ (BX)(R9*4), R13")
	g.p("\tVMOVUPS (BX), Y0")
	g.p("\tVMOVUPS (BX)(R9*1), Y1")
	g.p("\tVMOVUPS (BX)(R9*2), Y2")
	g.p("\tVMOVUPS (BX)(R12*1), Y3")
	g.p("\tVMOVUPS (R13), Y4")
	g.p("\tVMOVUPS (R13)(R9*1), Y5")
	g.p("\tVMOVUPS (R13)(R9*2), Y6")
	g.p("\tVMOVUPS (R13)(R12*1), Y7")
	for i := 0; i < 8; i += 2 {
		g.p("\tVUNPCKLPS Y%d, Y%d, Y%d", i+1, i, 8+i)
		g.p("\tVUNPCKHPS Y%d, Y%d, Y%d", i+1, i, 9+i)
	}
	for _, q := range [][3]int{{8, 10, 0}, {9, 11, 2}, {12, 14, 4}, {13, 15, 6}} {
		g.p("\tVSHUFPS $0x44, Y%d, Y%d, Y%d", q[1], q[0], q[2])
		g.p("\tVSHUFPS $0xEE, Y%d, Y%d, Y%d", q[1], q[0], q[2]+1)
	}
	for i := 0; i < 4; i++ {
		g.p("\tVPERM2F128 $0x20, Y%d, Y%d, Y%d", i+4, i, 8+i)
		g.p("\tVPERM2F128 $0x31, Y%d, Y%d, Y%d", i+4, i, 12+i)
	}
	g.p("\tLEAQ (DX)(R8*4), R15")
	g.p("\tVMOVUPS Y8, (DX)")
	g.p("\tVMOVUPS Y9, (DX)(R8*1)")
	g.p("\tVMOVUPS Y10, (DX)(R8*2)")
	g.p("\tVMOVUPS Y11, (DX)(R14*1)")
	g.p("\tVMOVUPS Y12, (R15)")
	g.p("\tVMOVUPS Y13, (R15)(R8*1)")
	g.p("\tVMOVUPS Y14, (R15)(R8*2)")
	g.p("\tVMOVUPS Y15, (R15)(R14*1)")
	g.p("\tADDQ $32, BX")
	g.p("\tLEAQ (R15)(R8*4), DX")
	g.p("\tDECQ CX")
	g.p("\tJNZ tstep")
	g.p("\tLEAQ (SI)(R9*8), SI")
	g.p("\tADDQ $32, DI")
	g.p("\tDECQ AX")
	g.p("\tJNZ tblock")
	g.p("tdone:")
	g.p("\tVZEROUPPER")
	g.p("\tRET")
	g.p("")
}

func main() {
	var g gen
	g.p("// Code generated by gen_gemm_asm.go; DO NOT EDIT.")
	g.p("")
	g.p("//go:build amd64 && !purego")
	g.p("")
	g.p("#include \"textflag.h\"")
	g.p("#include \"ftz_amd64.h\"")
	g.p("")
	g.p("// lanebits<>: dword j holds 1<<j, to turn a column bit mask into lane masks.")
	for j := 0; j < 16; j++ {
		g.p("DATA lanebits<>+%d(SB)/4, $0x%x", j*4, 1<<j)
	}
	g.p("GLOBL lanebits<>(SB), RODATA|NOPTR, $64")
	g.p("")
	for _, k := range kernels {
		g.kernel(k)
	}
	g.packTrans()
	g.packPanels()
	g.packTrans8()
	src := g.b.Bytes()
	if err := os.WriteFile("gemm_kernel_amd64.s", src, 0o644); err != nil {
		log.Fatal(err)
	}
}
