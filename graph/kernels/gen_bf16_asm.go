//go:build ignore

// gen_bf16_asm.go writes bf16_kernel_amd64.s, the AVX512_BF16 register-tile
// micro-kernel of the bfloat16 products. Run it with `go generate` (see
// bf16_kernel_amd64.go).
//
// The kernel computes one 14×32 tile of C over kp pairs of depth:
//
//	acc[i, j] = VDPBF16PS chain over q of A(i, q)·B(q, j)
//	C[i, j] = alpha·acc[i, j] (+ beta·C[i, j], fused, when beta ≠ 0)
//
// for i < mr and the columns j whose bit is set in mask, with MXCSR set to
// DAZ, FTZ and round to nearest even for the whole tile (VDPBF16PS itself
// ignores MXCSR and always behaves so). A(i, q) is a dword holding a pair of
// bfloat16 (depth 2q in the low half, 2q+1 in the high half) at
// a + i·rs + q·qs (dwords); B(q, ·) is 32 such dwords at b + 32·q.
//
// Go's assembler does not know VDPBF16PS, so it is emitted as its EVEX
// bytes (vdpbf16ps below; TestBF16EmulatedEqualsReference pins the
// kernel, so a wrong register in them fails it).
package main

import (
	"bytes"
	"fmt"
	"log"
	"os"
)

const (
	mr   = 14
	nv   = 2
	nacc = mr * nv
)

type gen struct{ b bytes.Buffer }

func (g *gen) p(format string, args ...any) { fmt.Fprintf(&g.b, format+"\n", args...) }

func z(i int) string { return fmt.Sprintf("Z%d", i) }

func acc(i, v int) int { return i*nv + v }

// vdpbf16ps returns the BYTE directives of VDPBF16PS zmm(dst), zmm(src1),
// zmm(src2): EVEX.512.F3.0F38.W0 52 /r, register form, no masking.
func vdpbf16ps(dst, src1, src2 int) string {
	inv := func(bit int) int { return bit ^ 1 }
	p0 := inv(dst>>3&1)<<7 | inv(src2>>4&1)<<6 | inv(src2>>3&1)<<5 | inv(dst>>4&1)<<4 | 0b0010
	p1 := 0<<7 | (^src1&15)<<3 | 1<<2 | 0b10
	p2 := 0<<7 | 0b10<<5 | 0<<4 | inv(src1>>4&1)<<3
	modrm := 0xc0 | (dst&7)<<3 | src2&7
	return fmt.Sprintf("BYTE $0x62; BYTE $0x%02x; BYTE $0x%02x; BYTE $0x%02x; BYTE $0x52; BYTE $0x%02x // VDPBF16PS Z%d, Z%d, Z%d", p0, p1, p2, modrm, src2, src1, dst)
}

// rowAddr returns a base register and a scaled-index suffix for row i,
// given base registers at the row offsets in bases. R8 = rs·4 bytes,
// R9 = 3·R8.
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

func (g *gen) kernel() {
	baseRegs := []string{"SI", "R10", "R11"}
	bases := rowBases(mr)
	if len(bases) > len(baseRegs) {
		log.Fatal("too many row bases")
	}
	name := "bf16dot14x32AVX512BF16"
	g.p("// func %s(kp int, a *uint32, rs int, b *uint32, qs int, c *float32, ldc int, alpha, beta float32, mr int, mask uint64)", name)
	g.p("TEXT ·%s(SB), NOSPLIT, $8-80", name)
	g.p("\tSTMXCSR old-8(SP)")
	g.p("\tMOVL old-8(SP), AX")
	g.p("\tORL $0x8040, AX")
	g.p("\tANDL $0xffff9fff, AX")
	g.p("\tMOVL AX, new-4(SP)")
	g.p("\tLDMXCSR new-4(SP)")
	g.p("\tMOVQ kp+0(FP), CX")
	g.p("\tMOVQ a+8(FP), SI")
	g.p("\tMOVQ rs+16(FP), R8")
	g.p("\tSHLQ $2, R8")
	g.p("\tMOVQ b+24(FP), DX")
	g.p("\tMOVQ qs+32(FP), DI")
	g.p("\tSHLQ $2, DI")
	g.p("\tLEAQ (R8)(R8*2), R9")
	for bi := 1; bi < len(bases); bi++ {
		g.p("\tIMUL3Q $%d, R8, AX", bases[bi])
		g.p("\tLEAQ (SI)(AX*1), %s", baseRegs[bi])
	}
	g.p("\tMOVQ c+40(FP), BX")
	g.p("\tMOVQ ldc+48(FP), R12")
	g.p("\tSHLQ $2, R12")
	for i := 0; i < mr; i++ {
		g.p("\tPREFETCHT0 (BX)")
		g.p("\tPREFETCHT0 127(BX)")
		if i+1 < mr {
			g.p("\tADDQ R12, BX")
		}
	}
	for i := 0; i < nacc; i++ {
		g.p("\tVPXORD %s, %s, %s", z(i), z(i), z(i))
	}
	g.p("\tTESTQ CX, CX")
	g.p("\tJZ epilogue")
	g.p("loop:")
	g.p("\tVMOVUPS 0(DX), Z28")
	g.p("\tVMOVUPS 64(DX), Z29")
	g.p("\tADDQ $128, DX")
	for i := 0; i < mr; i++ {
		bc := 30 + i%2
		base, idx := rowAddr(i, bases, baseRegs)
		g.p("\tVPBROADCASTD (%s)%s, %s", base, idx, z(bc))
		for v := 0; v < nv; v++ {
			g.p("\t%s", vdpbf16ps(acc(i, v), 28+v, bc))
		}
	}
	for bi := range bases {
		g.p("\tADDQ DI, %s", baseRegs[bi])
	}
	g.p("\tDECQ CX")
	g.p("\tJNZ loop")

	g.p("epilogue:")
	g.p("\tVBROADCASTSS alpha+56(FP), Z30")
	for i := 0; i < nacc; i++ {
		g.p("\tVMULPS Z30, %s, %s", z(i), z(i))
	}
	g.p("\tMOVQ ldc+48(FP), R12")
	g.p("\tSHLQ $2, R12")
	g.p("\tMOVQ mr+64(FP), R13")
	g.p("\tMOVL beta+60(FP), AX")
	g.p("\tANDL $0x7fffffff, AX")
	g.p("\tMOVQ mask+72(FP), CX")
	g.p("\tKMOVW CX, K1")
	g.p("\tSHRQ $16, CX")
	g.p("\tKMOVW CX, K2")
	g.p("\tTESTL AX, AX")
	g.p("\tJZ store0")
	g.p("\tVBROADCASTSS beta+60(FP), Z31")
	g.rows(func(i int) {
		for v := 0; v < nv; v++ {
			g.p("\tVMOVUPS.Z %d(BX), K%d, Z28", v*64, v+1)
			g.p("\tVFMADD231PS Z31, Z28, %s", z(acc(i, v)))
			g.p("\tVMOVUPS %s, K%d, %d(BX)", z(acc(i, v)), v+1, v*64)
		}
	})
	g.p("store0:")
	g.rows(func(i int) {
		for v := 0; v < nv; v++ {
			g.p("\tVMOVUPS %s, K%d, %d(BX)", z(acc(i, v)), v+1, v*64)
		}
	})
	g.p("done:")
	g.p("\tLDMXCSR old-8(SP)")
	g.p("\tVZEROUPPER")
	g.p("\tRET")
	g.p("")
}

// rows emits body(i) for each row i < mr, advancing BX by ldc and leaving
// early (to done) once mr rows are stored. BX is restored from c first.
func (g *gen) rows(body func(i int)) {
	g.p("\tMOVQ c+40(FP), BX")
	for i := 0; i < mr; i++ {
		if i > 0 {
			g.p("\tCMPQ R13, $%d", i)
			g.p("\tJLE done")
			g.p("\tADDQ R12, BX")
		}
		body(i)
	}
	g.p("\tJMP done")
}

func main() {
	g := new(gen)
	g.p("// Code generated by gen_bf16_asm.go; DO NOT EDIT.")
	g.p("")
	g.p("//go:build amd64 && !purego")
	g.p("")
	g.p("#include \"textflag.h\"")
	g.p("")
	g.kernel()
	if err := os.WriteFile("bf16_kernel_amd64.s", g.b.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
}
