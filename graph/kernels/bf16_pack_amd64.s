//go:build amd64 && !purego

#include "textflag.h"
#include "ftz_amd64.h"

// CVTW sets Y1 to the 16 float32 of Z0 rounded to bfloat16 by
// VCVTNEPS2BF16 (AVX512_BF16; Go's assembler lacks it, so it is its bytes
// from GNU as): to nearest even, subnormals to signed zero, NaNs made
// quiet, MXCSR neither read nor written. That is ToBF16 bit for bit
// (Intel's pseudo-code for the instruction; TestPackConversion).
#define CVTW BYTE $0x62; BYTE $0xf2; BYTE $0x7e; BYTE $0x48; BYTE $0x72; BYTE $0xc8

// CVT2 sets Z18 to Z16's 16 float32 rounded to bfloat16 in its low 16
// words and Z17's in its high 16 (VCVTNE2PS2BF16, CVTW's rounding; the
// bytes GNU as gives for vcvtne2ps2bf16 %zmm16, %zmm17, %zmm18).
#define CVT2 BYTE $0x62; BYTE $0xa2; BYTE $0x77; BYTE $0x40; BYTE $0x72; BYTE $0xd0

// CVTLO sets Z1's dwords to Z0's bfloat16 in their low halves, CVTHI in
// their high halves (the other half +0).
#define CVTLO CVTW; VPMOVZXWD Y1, Z1
#define CVTHI CVTLO; VPSLLD $16, Z1, Z1

// TAILMASK sets K3 to the low CX bits when CX < 16 (and CX to 16), or
// jumps to done when CX is 0; it falls through to full when CX ≥ 16.
#define TAILMASK(full, done) \
	CMPQ CX, $16 \
	JGE full \
	TESTQ CX, CX \
	JZ done \
	MOVL $1, AX \
	SHLL CX, AX \
	DECL AX \
	KMOVW AX, K3 \
	MOVQ $16, CX

// func wordsBF16AVX512(dst *uint16, src *float32, n int)
//
// dst[i] = ToBF16(src[i]) for i < n.
TEXT ·wordsBF16AVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
wloop:
	CMPQ CX, $32
	JLT wtail
	VMOVUPS (SI), Z16 // 32 at a time, unmasked: masked stores are slow on AMD
	VMOVUPS 64(SI), Z17
	CVT2
	VMOVDQU16 Z18, (DI)
	ADDQ $128, SI
	ADDQ $64, DI
	SUBQ $32, CX
	JMP wloop
wtail:
	MOVL $0xffff, AX
	KMOVW AX, K3
wtloop:
	TAILMASK(wfull, wdone)
wfull:
	VMOVDQU32.Z (SI), K3, Z0
	CVTW
	VMOVDQU16 Y1, K3, (DI)
	ADDQ $64, SI
	ADDQ $32, DI
	SUBQ $16, CX
	JMP wtloop
wdone:
	VZEROUPPER
	RET

// func widenBF16AVX512(dst *float32, src *uint16, n int)
//
// dst[i] = the float32 whose upper half is src[i] (FromBF16), for i < n.
TEXT ·widenBF16AVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVL $0xffff, AX
	KMOVW AX, K3
vloop:
	TAILMASK(vfull, vdone)
vfull:
	VPMOVZXWD.Z (SI), K3, Z1
	VPSLLD $16, Z1, Z1
	VMOVDQU32 Z1, K3, (DI)
	ADDQ $32, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JMP vloop
vdone:
	VZEROUPPER
	RET

// func epilogueFTZAVX512(c *float32, ldc int, acc *float32, lacc int, rows, n int, alpha, beta float32)
//
// c[r·ldc + j] = alpha·acc[r·lacc + j] + beta·c[r·ldc + j] (fused; acc's
// term alone when beta is 0) for r < rows and j < n, with MXCSR's DAZ and
// FTZ set and rounding to nearest even: fmaFTZ's arithmetic, as
// epilogueFTZ. MXCSR is set once for all the rows.
TEXT ·epilogueFTZAVX512(SB), NOSPLIT, $8-56
	SETFTZ
	MOVQ c+0(FP), R8
	MOVQ ldc+8(FP), R11
	SHLQ $2, R11
	MOVQ acc+16(FP), R9
	MOVQ lacc+24(FP), R12
	SHLQ $2, R12
	MOVQ rows+32(FP), R10
	VBROADCASTSS alpha+48(FP), Z30
	VBROADCASTSS beta+52(FP), Z31
	MOVL beta+52(FP), DX
	ANDL $0x7fffffff, DX
erow:
	TESTQ R10, R10
	JZ eend
	MOVQ R8, DI
	MOVQ R9, SI
	MOVQ n+40(FP), CX
eloop:
	CMPQ CX, $16
	JLT etail
	VMULPS (SI), Z30, Z0 // whole vectors unmasked: masked stores are slow on AMD
	TESTL DX, DX
	JZ estore
	VFMADD231PS (DI), Z31, Z0
estore:
	VMOVUPS Z0, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JMP eloop
etail:
	TESTQ CX, CX
	JZ edone
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K3
	VMOVUPS.Z (SI), K3, Z0
	VMULPS Z30, Z0, Z0
	TESTL DX, DX
	JZ etstore
	VMOVUPS.Z (DI), K3, Z1
	VFMADD231PS Z31, Z1, Z0
etstore:
	VMOVUPS Z0, K3, (DI)
edone:
	ADDQ R11, R8
	ADDQ R12, R9
	DECQ R10
	JMP erow
eend:
	RESTOREFTZ
	VZEROUPPER
	RET

// TRANSPOSE16 transposes the 16×16 dwords of Z0–Z15 (row i in Zi) into
// Z0–Z15 (column j in Zj), through Z16–Z31.
#define TRANSPOSE16 \
	VPUNPCKLDQ Z1, Z0, Z16 \
	VPUNPCKHDQ Z1, Z0, Z17 \
	VPUNPCKLDQ Z3, Z2, Z18 \
	VPUNPCKHDQ Z3, Z2, Z19 \
	VPUNPCKLDQ Z5, Z4, Z20 \
	VPUNPCKHDQ Z5, Z4, Z21 \
	VPUNPCKLDQ Z7, Z6, Z22 \
	VPUNPCKHDQ Z7, Z6, Z23 \
	VPUNPCKLDQ Z9, Z8, Z24 \
	VPUNPCKHDQ Z9, Z8, Z25 \
	VPUNPCKLDQ Z11, Z10, Z26 \
	VPUNPCKHDQ Z11, Z10, Z27 \
	VPUNPCKLDQ Z13, Z12, Z28 \
	VPUNPCKHDQ Z13, Z12, Z29 \
	VPUNPCKLDQ Z15, Z14, Z30 \
	VPUNPCKHDQ Z15, Z14, Z31 \
	VPUNPCKLQDQ Z18, Z16, Z0 \
	VPUNPCKHQDQ Z18, Z16, Z1 \
	VPUNPCKLQDQ Z19, Z17, Z2 \
	VPUNPCKHQDQ Z19, Z17, Z3 \
	VPUNPCKLQDQ Z22, Z20, Z4 \
	VPUNPCKHQDQ Z22, Z20, Z5 \
	VPUNPCKLQDQ Z23, Z21, Z6 \
	VPUNPCKHQDQ Z23, Z21, Z7 \
	VPUNPCKLQDQ Z26, Z24, Z8 \
	VPUNPCKHQDQ Z26, Z24, Z9 \
	VPUNPCKLQDQ Z27, Z25, Z10 \
	VPUNPCKHQDQ Z27, Z25, Z11 \
	VPUNPCKLQDQ Z30, Z28, Z12 \
	VPUNPCKHQDQ Z30, Z28, Z13 \
	VPUNPCKLQDQ Z31, Z29, Z14 \
	VPUNPCKHQDQ Z31, Z29, Z15 \
	VSHUFI32X4 $0x88, Z4, Z0, Z16 \
	VSHUFI32X4 $0xdd, Z4, Z0, Z20 \
	VSHUFI32X4 $0x88, Z5, Z1, Z17 \
	VSHUFI32X4 $0xdd, Z5, Z1, Z21 \
	VSHUFI32X4 $0x88, Z6, Z2, Z18 \
	VSHUFI32X4 $0xdd, Z6, Z2, Z22 \
	VSHUFI32X4 $0x88, Z7, Z3, Z19 \
	VSHUFI32X4 $0xdd, Z7, Z3, Z23 \
	VSHUFI32X4 $0x88, Z12, Z8, Z24 \
	VSHUFI32X4 $0xdd, Z12, Z8, Z28 \
	VSHUFI32X4 $0x88, Z13, Z9, Z25 \
	VSHUFI32X4 $0xdd, Z13, Z9, Z29 \
	VSHUFI32X4 $0x88, Z14, Z10, Z26 \
	VSHUFI32X4 $0xdd, Z14, Z10, Z30 \
	VSHUFI32X4 $0x88, Z15, Z11, Z27 \
	VSHUFI32X4 $0xdd, Z15, Z11, Z31 \
	VSHUFI32X4 $0x88, Z24, Z16, Z0 \
	VSHUFI32X4 $0xdd, Z24, Z16, Z8 \
	VSHUFI32X4 $0x88, Z25, Z17, Z1 \
	VSHUFI32X4 $0xdd, Z25, Z17, Z9 \
	VSHUFI32X4 $0x88, Z26, Z18, Z2 \
	VSHUFI32X4 $0xdd, Z26, Z18, Z10 \
	VSHUFI32X4 $0x88, Z27, Z19, Z3 \
	VSHUFI32X4 $0xdd, Z27, Z19, Z11 \
	VSHUFI32X4 $0x88, Z28, Z20, Z4 \
	VSHUFI32X4 $0xdd, Z28, Z20, Z12 \
	VSHUFI32X4 $0x88, Z29, Z21, Z5 \
	VSHUFI32X4 $0xdd, Z29, Z21, Z13 \
	VSHUFI32X4 $0x88, Z30, Z22, Z6 \
	VSHUFI32X4 $0xdd, Z30, Z22, Z14 \
	VSHUFI32X4 $0x88, Z31, Z23, Z7 \
	VSHUFI32X4 $0xdd, Z31, Z23, Z15

// func transpose16AVX512(dst *uint32, ldd int, src *uint32, lds int)
//
// dst[j·ldd + i] = src[i·lds + j] for i, j < 16: a 16×16 block of dwords
// transposed (strides in dwords).
TEXT ·transpose16AVX512(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ ldd+8(FP), DX
	SHLQ $2, DX
	MOVQ src+16(FP), SI
	MOVQ lds+24(FP), CX
	SHLQ $2, CX
	VMOVDQU32 (SI), Z0
	ADDQ CX, SI
	VMOVDQU32 (SI), Z1
	ADDQ CX, SI
	VMOVDQU32 (SI), Z2
	ADDQ CX, SI
	VMOVDQU32 (SI), Z3
	ADDQ CX, SI
	VMOVDQU32 (SI), Z4
	ADDQ CX, SI
	VMOVDQU32 (SI), Z5
	ADDQ CX, SI
	VMOVDQU32 (SI), Z6
	ADDQ CX, SI
	VMOVDQU32 (SI), Z7
	ADDQ CX, SI
	VMOVDQU32 (SI), Z8
	ADDQ CX, SI
	VMOVDQU32 (SI), Z9
	ADDQ CX, SI
	VMOVDQU32 (SI), Z10
	ADDQ CX, SI
	VMOVDQU32 (SI), Z11
	ADDQ CX, SI
	VMOVDQU32 (SI), Z12
	ADDQ CX, SI
	VMOVDQU32 (SI), Z13
	ADDQ CX, SI
	VMOVDQU32 (SI), Z14
	ADDQ CX, SI
	VMOVDQU32 (SI), Z15
	TRANSPOSE16
	VMOVDQU32 Z0, (DI)
	ADDQ DX, DI
	VMOVDQU32 Z1, (DI)
	ADDQ DX, DI
	VMOVDQU32 Z2, (DI)
	ADDQ DX, DI
	VMOVDQU32 Z3, (DI)
	ADDQ DX, DI
	VMOVDQU32 Z4, (DI)
	ADDQ DX, DI
	VMOVDQU32 Z5, (DI)
	ADDQ DX, DI
	VMOVDQU32 Z6, (DI)
	ADDQ DX, DI
	VMOVDQU32 Z7, (DI)
	ADDQ DX, DI
	VMOVDQU32 Z8, (DI)
	ADDQ DX, DI
	VMOVDQU32 Z9, (DI)
	ADDQ DX, DI
	VMOVDQU32 Z10, (DI)
	ADDQ DX, DI
	VMOVDQU32 Z11, (DI)
	ADDQ DX, DI
	VMOVDQU32 Z12, (DI)
	ADDQ DX, DI
	VMOVDQU32 Z13, (DI)
	ADDQ DX, DI
	VMOVDQU32 Z14, (DI)
	ADDQ DX, DI
	VMOVDQU32 Z15, (DI)
	VZEROUPPER
	RET


// pairIdx is VPERMW's indices that interleave CVT2's halves into pairs:
// dword c takes words c and 16+c.
DATA pairIdx<>+0(SB)/8, $0x0011000100100000
DATA pairIdx<>+8(SB)/8, $0x0013000300120002
DATA pairIdx<>+16(SB)/8, $0x0015000500140004
DATA pairIdx<>+24(SB)/8, $0x0017000700160006
DATA pairIdx<>+32(SB)/8, $0x0019000900180008
DATA pairIdx<>+40(SB)/8, $0x001b000b001a000a
DATA pairIdx<>+48(SB)/8, $0x001d000d001c000c
DATA pairIdx<>+56(SB)/8, $0x001f000f001e000e
GLOBL pairIdx<>(SB), RODATA|NOPTR, $64

// TSLOT sets dst to the pairs ToBF16(lo) | ToBF16(hi)<<16 of the 16
// columns (mask K3, +0 outside it) of rows lo and hi, at SI plus the byte
// offsets off(R10) and off+8(R10) (Z20 holds pairIdx; Z16–Z18 are
// clobbered).
#define TSLOT(off, dst) \
	MOVQ off(R10), AX \
	VMOVDQU32.Z (SI)(AX*1), K3, Z16 \
	MOVQ off+8(R10), AX \
	VMOVDQU32.Z (SI)(AX*1), K3, Z17 \
	CVT2 \
	VPERMW Z18, Z20, dst

// TSLOTM is TSLOT in a block's last rows: the offsets are at off+520(R10)
// and off+528(R10), and a row whose mask off+264(R10) (off+272 for hi) is
// 0 reads as +0 (R8 holds the columns' mask).
#define TSLOTM(off, dst) \
	MOVQ off+520(R10), AX \
	MOVQ off+264(R10), BX \
	ANDQ R8, BX \
	KMOVW BX, K4 \
	VMOVDQU32.Z (SI)(AX*1), K4, Z16 \
	MOVQ off+528(R10), AX \
	MOVQ off+272(R10), BX \
	ANDQ R8, BX \
	KMOVW BX, K4 \
	VMOVDQU32.Z (SI)(AX*1), K4, Z17 \
	CVT2 \
	VPERMW Z18, Z20, dst

// COLMASK sets AX (and K3) to the mask of the CX columns left, at most 16.
#define COLMASK(full) \
	MOVL $0xffff, AX \
	CMPQ CX, $16 \
	JGE full \
	MOVL $1, AX \
	SHLL CX, AX \
	DECL AX \
full: \
	KMOVW AX, K3

// func transRowsAVX512(dst *uint16, la int, a *float32, offs *[97]int, blocks, cols int, last bool)
//
// A transposed operand's rows in bfloat16: for each block b of 32 rows of
// a (the depth; blocks whole ones, then one more when last) and each
// column i < cols of a, 16 columns at a time, dst[i·la + 32b + w] =
// ToBF16(a's row 32b + r(w), column i), where offs[w] is r(w)'s offset in
// bytes, offs[32] a block's, and in the last block offs[33+w] is -1 where
// row r(w) is there, 0 where it reads as +0, and offs[65+w] is r(w)'s
// offset; the rows of dst from cols up to the next multiple of 16 get +0.
TEXT ·transRowsAVX512(SB), NOSPLIT, $0-49
	MOVQ dst+0(FP), DI
	MOVQ la+8(FP), DX
	SHLQ $1, DX
	MOVQ a+16(FP), SI
	MOVQ offs+24(FP), R10
	MOVQ blocks+32(FP), R9
	MOVQ 256(R10), R11
tblock:
	TESTQ R9, R9
	JZ tlast
	MOVQ cols+40(FP), CX
	MOVQ SI, R12
	MOVQ DI, R13
tgroup:
	COLMASK(tfull)
	VMOVDQU64 pairIdx<>(SB), Z20 // TRANSPOSE16 clobbers it
	TSLOT(0, Z0)
	TSLOT(16, Z1)
	TSLOT(32, Z2)
	TSLOT(48, Z3)
	TSLOT(64, Z4)
	TSLOT(80, Z5)
	TSLOT(96, Z6)
	TSLOT(112, Z7)
	TSLOT(128, Z8)
	TSLOT(144, Z9)
	TSLOT(160, Z10)
	TSLOT(176, Z11)
	TSLOT(192, Z12)
	TSLOT(208, Z13)
	TSLOT(224, Z14)
	TSLOT(240, Z15)
	TRANSPOSE16
	MOVQ R13, BX
	VMOVDQU32 Z0, (BX)
	ADDQ DX, BX
	VMOVDQU32 Z1, (BX)
	ADDQ DX, BX
	VMOVDQU32 Z2, (BX)
	ADDQ DX, BX
	VMOVDQU32 Z3, (BX)
	ADDQ DX, BX
	VMOVDQU32 Z4, (BX)
	ADDQ DX, BX
	VMOVDQU32 Z5, (BX)
	ADDQ DX, BX
	VMOVDQU32 Z6, (BX)
	ADDQ DX, BX
	VMOVDQU32 Z7, (BX)
	ADDQ DX, BX
	VMOVDQU32 Z8, (BX)
	ADDQ DX, BX
	VMOVDQU32 Z9, (BX)
	ADDQ DX, BX
	VMOVDQU32 Z10, (BX)
	ADDQ DX, BX
	VMOVDQU32 Z11, (BX)
	ADDQ DX, BX
	VMOVDQU32 Z12, (BX)
	ADDQ DX, BX
	VMOVDQU32 Z13, (BX)
	ADDQ DX, BX
	VMOVDQU32 Z14, (BX)
	ADDQ DX, BX
	VMOVDQU32 Z15, (BX)
	ADDQ DX, BX
	MOVQ BX, R13
	ADDQ $64, SI
	SUBQ $16, CX
	JG tgroup
	LEAQ (R12)(R11*1), SI
	ADDQ $64, DI
	DECQ R9
	JMP tblock
tlast:
	CMPB last+48(FP), $0
	JEQ tdone
	MOVQ cols+40(FP), CX
	MOVQ DI, R13
ugroup:
	COLMASK(ufull)
	VMOVDQU64 pairIdx<>(SB), Z20
	MOVQ AX, R8
	TSLOTM(0, Z0)
	TSLOTM(16, Z1)
	TSLOTM(32, Z2)
	TSLOTM(48, Z3)
	TSLOTM(64, Z4)
	TSLOTM(80, Z5)
	TSLOTM(96, Z6)
	TSLOTM(112, Z7)
	TSLOTM(128, Z8)
	TSLOTM(144, Z9)
	TSLOTM(160, Z10)
	TSLOTM(176, Z11)
	TSLOTM(192, Z12)
	TSLOTM(208, Z13)
	TSLOTM(224, Z14)
	TSLOTM(240, Z15)
	TRANSPOSE16
	MOVQ R13, BX
	VMOVDQU32 Z0, (BX)
	ADDQ DX, BX
	VMOVDQU32 Z1, (BX)
	ADDQ DX, BX
	VMOVDQU32 Z2, (BX)
	ADDQ DX, BX
	VMOVDQU32 Z3, (BX)
	ADDQ DX, BX
	VMOVDQU32 Z4, (BX)
	ADDQ DX, BX
	VMOVDQU32 Z5, (BX)
	ADDQ DX, BX
	VMOVDQU32 Z6, (BX)
	ADDQ DX, BX
	VMOVDQU32 Z7, (BX)
	ADDQ DX, BX
	VMOVDQU32 Z8, (BX)
	ADDQ DX, BX
	VMOVDQU32 Z9, (BX)
	ADDQ DX, BX
	VMOVDQU32 Z10, (BX)
	ADDQ DX, BX
	VMOVDQU32 Z11, (BX)
	ADDQ DX, BX
	VMOVDQU32 Z12, (BX)
	ADDQ DX, BX
	VMOVDQU32 Z13, (BX)
	ADDQ DX, BX
	VMOVDQU32 Z14, (BX)
	ADDQ DX, BX
	VMOVDQU32 Z15, (BX)
	ADDQ DX, BX
	MOVQ BX, R13
	ADDQ $64, SI
	SUBQ $16, CX
	JG ugroup
tdone:
	VZEROUPPER
	RET

// WSLOT is TSLOT for rows of bfloat16 words (copied, not converted).
#define WSLOT(off, dst) \
	MOVQ off(R10), AX \
	VMOVDQU16.Z (SI)(AX*1), K3, Y16 \
	MOVQ off+8(R10), AX \
	VMOVDQU16.Z (SI)(AX*1), K3, Y17 \
	VINSERTI64X4 $1, Y17, Z16, Z18 \
	VPERMW Z18, Z20, dst

// WSLOTM is TSLOTM for rows of bfloat16 words.
#define WSLOTM(off, dst) \
	MOVQ off+520(R10), AX \
	MOVQ off+264(R10), BX \
	ANDQ R8, BX \
	KMOVW BX, K4 \
	VMOVDQU16.Z (SI)(AX*1), K4, Y16 \
	MOVQ off+528(R10), AX \
	MOVQ off+272(R10), BX \
	ANDQ R8, BX \
	KMOVW BX, K4 \
	VMOVDQU16.Z (SI)(AX*1), K4, Y17 \
	VINSERTI64X4 $1, Y17, Z16, Z18 \
	VPERMW Z18, Z20, dst

// func pairPanelsAVX512(dst *uint32, pstride int, b unsafe.Pointer, offs *[97]int, blocks, cols int, last, words bool)
//
// A non-transposed operand's pairs in 16-column panels: for each block of
// 32 rows of b (the depth; blocks whole ones, then one more when last) and
// each column j < cols of b, 16 columns at a time (panel j/16, pstride
// bytes apart), pair row s of the block is (row r(2s), row r(2s+1)) of
// column j, ToBF16 of float32 values, or words copied when words; offs is
// transRowsAVX512's table. A block's 16 pair rows are 1024 bytes.
TEXT ·pairPanelsAVX512(SB), NOSPLIT, $0-50
	MOVQ dst+0(FP), DI
	MOVQ pstride+8(FP), DX
	MOVQ b+16(FP), SI
	MOVQ offs+24(FP), R10
	MOVQ blocks+32(FP), R9
	MOVQ 256(R10), R11
	CMPB words+49(FP), $0
	JNE wblock
pblock:
	TESTQ R9, R9
	JZ plast
	MOVQ cols+40(FP), CX
	MOVQ SI, R12
	MOVQ DI, R13
pfgroup:
	COLMASK(pffull)
	VMOVDQU64 pairIdx<>(SB), Z20
	TSLOT(0, Z0)
	TSLOT(16, Z1)
	TSLOT(32, Z2)
	TSLOT(48, Z3)
	TSLOT(64, Z4)
	TSLOT(80, Z5)
	TSLOT(96, Z6)
	TSLOT(112, Z7)
	TSLOT(128, Z8)
	TSLOT(144, Z9)
	TSLOT(160, Z10)
	TSLOT(176, Z11)
	TSLOT(192, Z12)
	TSLOT(208, Z13)
	TSLOT(224, Z14)
	TSLOT(240, Z15)
	VMOVDQU32 Z0, 0(R13)
	VMOVDQU32 Z1, 64(R13)
	VMOVDQU32 Z2, 128(R13)
	VMOVDQU32 Z3, 192(R13)
	VMOVDQU32 Z4, 256(R13)
	VMOVDQU32 Z5, 320(R13)
	VMOVDQU32 Z6, 384(R13)
	VMOVDQU32 Z7, 448(R13)
	VMOVDQU32 Z8, 512(R13)
	VMOVDQU32 Z9, 576(R13)
	VMOVDQU32 Z10, 640(R13)
	VMOVDQU32 Z11, 704(R13)
	VMOVDQU32 Z12, 768(R13)
	VMOVDQU32 Z13, 832(R13)
	VMOVDQU32 Z14, 896(R13)
	VMOVDQU32 Z15, 960(R13)
	ADDQ DX, R13
	ADDQ $64, SI
	SUBQ $16, CX
	JG pfgroup
	LEAQ (R12)(R11*1), SI
	ADDQ $1024, DI
	DECQ R9
	JMP pblock
plast:
	CMPB last+48(FP), $0
	JEQ pdone
	MOVQ cols+40(FP), CX
	MOVQ DI, R13
pmgroup:
	COLMASK(pmfull)
	MOVQ AX, R8
	VMOVDQU64 pairIdx<>(SB), Z20
	TSLOTM(0, Z0)
	TSLOTM(16, Z1)
	TSLOTM(32, Z2)
	TSLOTM(48, Z3)
	TSLOTM(64, Z4)
	TSLOTM(80, Z5)
	TSLOTM(96, Z6)
	TSLOTM(112, Z7)
	TSLOTM(128, Z8)
	TSLOTM(144, Z9)
	TSLOTM(160, Z10)
	TSLOTM(176, Z11)
	TSLOTM(192, Z12)
	TSLOTM(208, Z13)
	TSLOTM(224, Z14)
	TSLOTM(240, Z15)
	VMOVDQU32 Z0, 0(R13)
	VMOVDQU32 Z1, 64(R13)
	VMOVDQU32 Z2, 128(R13)
	VMOVDQU32 Z3, 192(R13)
	VMOVDQU32 Z4, 256(R13)
	VMOVDQU32 Z5, 320(R13)
	VMOVDQU32 Z6, 384(R13)
	VMOVDQU32 Z7, 448(R13)
	VMOVDQU32 Z8, 512(R13)
	VMOVDQU32 Z9, 576(R13)
	VMOVDQU32 Z10, 640(R13)
	VMOVDQU32 Z11, 704(R13)
	VMOVDQU32 Z12, 768(R13)
	VMOVDQU32 Z13, 832(R13)
	VMOVDQU32 Z14, 896(R13)
	VMOVDQU32 Z15, 960(R13)
	ADDQ DX, R13
	ADDQ $64, SI
	SUBQ $16, CX
	JG pmgroup
	JMP pdone
wblock:
	TESTQ R9, R9
	JZ wlast
	MOVQ cols+40(FP), CX
	MOVQ SI, R12
	MOVQ DI, R13
wfgroup:
	COLMASK(wffull)
	VMOVDQU64 pairIdx<>(SB), Z20
	WSLOT(0, Z0)
	WSLOT(16, Z1)
	WSLOT(32, Z2)
	WSLOT(48, Z3)
	WSLOT(64, Z4)
	WSLOT(80, Z5)
	WSLOT(96, Z6)
	WSLOT(112, Z7)
	WSLOT(128, Z8)
	WSLOT(144, Z9)
	WSLOT(160, Z10)
	WSLOT(176, Z11)
	WSLOT(192, Z12)
	WSLOT(208, Z13)
	WSLOT(224, Z14)
	WSLOT(240, Z15)
	VMOVDQU32 Z0, 0(R13)
	VMOVDQU32 Z1, 64(R13)
	VMOVDQU32 Z2, 128(R13)
	VMOVDQU32 Z3, 192(R13)
	VMOVDQU32 Z4, 256(R13)
	VMOVDQU32 Z5, 320(R13)
	VMOVDQU32 Z6, 384(R13)
	VMOVDQU32 Z7, 448(R13)
	VMOVDQU32 Z8, 512(R13)
	VMOVDQU32 Z9, 576(R13)
	VMOVDQU32 Z10, 640(R13)
	VMOVDQU32 Z11, 704(R13)
	VMOVDQU32 Z12, 768(R13)
	VMOVDQU32 Z13, 832(R13)
	VMOVDQU32 Z14, 896(R13)
	VMOVDQU32 Z15, 960(R13)
	ADDQ DX, R13
	ADDQ $32, SI
	SUBQ $16, CX
	JG wfgroup
	LEAQ (R12)(R11*1), SI
	ADDQ $1024, DI
	DECQ R9
	JMP wblock
wlast:
	CMPB last+48(FP), $0
	JEQ pdone
	MOVQ cols+40(FP), CX
	MOVQ DI, R13
wmgroup:
	COLMASK(wmfull)
	MOVQ AX, R8
	VMOVDQU64 pairIdx<>(SB), Z20
	WSLOTM(0, Z0)
	WSLOTM(16, Z1)
	WSLOTM(32, Z2)
	WSLOTM(48, Z3)
	WSLOTM(64, Z4)
	WSLOTM(80, Z5)
	WSLOTM(96, Z6)
	WSLOTM(112, Z7)
	WSLOTM(128, Z8)
	WSLOTM(144, Z9)
	WSLOTM(160, Z10)
	WSLOTM(176, Z11)
	WSLOTM(192, Z12)
	WSLOTM(208, Z13)
	WSLOTM(224, Z14)
	WSLOTM(240, Z15)
	VMOVDQU32 Z0, 0(R13)
	VMOVDQU32 Z1, 64(R13)
	VMOVDQU32 Z2, 128(R13)
	VMOVDQU32 Z3, 192(R13)
	VMOVDQU32 Z4, 256(R13)
	VMOVDQU32 Z5, 320(R13)
	VMOVDQU32 Z6, 384(R13)
	VMOVDQU32 Z7, 448(R13)
	VMOVDQU32 Z8, 512(R13)
	VMOVDQU32 Z9, 576(R13)
	VMOVDQU32 Z10, 640(R13)
	VMOVDQU32 Z11, 704(R13)
	VMOVDQU32 Z12, 768(R13)
	VMOVDQU32 Z13, 832(R13)
	VMOVDQU32 Z14, 896(R13)
	VMOVDQU32 Z15, 960(R13)
	ADDQ DX, R13
	ADDQ $32, SI
	SUBQ $16, CX
	JG wmgroup
	JMP pdone
pdone:
	VZEROUPPER
	RET

// dpPermIdx is dpPerm as VPERMW's indices: word i of a block takes the
// block's word dpPerm[i].
DATA dpPermIdx<>+0(SB)/8, $0x0004000600000002
DATA dpPermIdx<>+8(SB)/8, $0x000c000e0008000a
DATA dpPermIdx<>+16(SB)/8, $0x0014001600100012
DATA dpPermIdx<>+24(SB)/8, $0x001c001e0018001a
DATA dpPermIdx<>+32(SB)/8, $0x0005000700010003
DATA dpPermIdx<>+40(SB)/8, $0x000d000f0009000b
DATA dpPermIdx<>+48(SB)/8, $0x0015001700110013
DATA dpPermIdx<>+56(SB)/8, $0x001d001f0019001b
GLOBL dpPermIdx<>(SB), RODATA|NOPTR, $64

// func rowsAVX512(dst *uint16, kw int, src unsafe.Pointer, lds, rows, k int, perm, words bool)
//
// For each of rows rows: dst[r·kw + i] = ToBF16(src[r·lds + i]) for
// i < k (src float32 values; with words, bfloat16 words copied), +0 for
// k ≤ i < kw (kw a multiple of 32), each block of 32 words then permuted
// by dpPerm when perm. Nothing past k is read: whole blocks of 32 load
// unmasked, the last under masks, and blocks past k not at all.
TEXT ·rowsAVX512(SB), NOSPLIT, $0-50
	MOVQ dst+0(FP), DI
	MOVQ kw+8(FP), R8
	SHLQ $1, R8
	MOVQ src+16(FP), SI
	MOVQ lds+24(FP), R9
	SHLQ $1, R9
	MOVBLZX words+49(FP), BX
	TESTQ BX, BX
	JNZ 2(PC)
	SHLQ $1, R9 // float32: 4 bytes a value
	MOVQ rows+32(FP), R10
	MOVBLZX perm+48(FP), R12
	VMOVDQU16 dpPermIdx<>(SB), Z31
	VPXORD Z30, Z30, Z30
	// Each row: R11 whole blocks, a last one of DX (k mod 32) when DX > 0,
	// then R15 blocks past k; the last block's masks once for all rows.
	MOVQ k+40(FP), R11
	MOVQ R11, DX
	ANDQ $31, DX
	SHRQ $5, R11
	MOVQ kw+8(FP), R15
	SHRQ $5, R15
	SUBQ R11, R15
	TESTQ DX, DX
	JZ rrow
	DECQ R15
	MOVQ DX, CX
	MOVQ $1, AX
	SHLQ CX, AX
	DECQ AX
	KMOVD AX, K1 // words: all 32; float32: the first 16
	SHRQ $16, AX
	KMOVW AX, K2 // float32: the second 16
rrow:
	TESTQ R10, R10
	JZ rdone
	MOVQ DI, R13
	MOVQ SI, R14
	MOVQ R11, CX
rfull:
	TESTQ CX, CX
	JZ rlast
	TESTQ BX, BX
	JZ rff32
	VMOVDQU16 (R14), Z4
	ADDQ $64, R14
	JMP rfperm
rff32:
	VMOVUPS (R14), Z16
	VMOVUPS 64(R14), Z17
	CVT2
	VMOVDQA64 Z18, Z4
	ADDQ $128, R14
rfperm:
	TESTQ R12, R12
	JZ 2(PC)
	VPERMW Z4, Z31, Z4
	VMOVDQU16 Z4, (R13)
	ADDQ $64, R13
	DECQ CX
	JMP rfull
rlast:
	TESTQ DX, DX
	JZ rpast
	TESTQ BX, BX
	JZ rlf32
	VMOVDQU16.Z (R14), K1, Z4
	JMP rlperm
rlf32:
	VMOVUPS.Z (R14), K1, Z16
	VPXORD Z17, Z17, Z17
	CMPQ DX, $16
	JLE 2(PC)
	VMOVUPS.Z 64(R14), K2, Z17
	CVT2
	VMOVDQA64 Z18, Z4
rlperm:
	TESTQ R12, R12
	JZ 2(PC)
	VPERMW Z4, Z31, Z4
	VMOVDQU16 Z4, (R13)
	ADDQ $64, R13
rpast:
	MOVQ R15, CX
rploop:
	TESTQ CX, CX
	JZ rnext
	VMOVDQU16 Z30, (R13) // a block past k: +0, nothing read
	ADDQ $64, R13
	DECQ CX
	JMP rploop
rnext:
	ADDQ R8, DI
	ADDQ R9, SI
	DECQ R10
	JMP rrow
rdone:
	VZEROUPPER
	RET
