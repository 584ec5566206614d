//go:build amd64 && !purego

#include "textflag.h"
#include "int8_amd64.h"

// MADD adds one group of 4 depths of a row (at row) times the panel's
// group (Y8, Y9) to the row's sums (lo, hi): a − 128 as a signed byte (Y14
// = bytes 0x80), its magnitude times w with its sign (VPABSB, VPSIGNB), so
// VPMADDUBSW's pairs stay within int16; Y10 = int16 ones.
#define MADD(row, lo, hi) \
	VPBROADCASTD (row), Y11 \
	VPXOR        Y14, Y11, Y11 \
	VPSIGNB      Y11, Y8, Y12 \
	VPSIGNB      Y11, Y9, Y13 \
	VPABSB       Y11, Y11 \
	VPMADDUBSW   Y12, Y11, Y12 \
	VPMADDUBSW   Y13, Y11, Y13 \
	VPMADDWD     Y10, Y12, Y12 \
	VPMADDWD     Y10, Y13, Y13 \
	VPADDD       Y12, lo, lo \
	VPADDD       Y13, hi, hi



// MADDRAW adds one group of 4 depths of a row of a_q (the memory operand
// at: 4 unsigned bytes) times the panel's group (Y8, Y9) to the row's sums
// (lo, hi): int8_amd64.h's INT8PAIRS on the broadcast bytes. Y10 = int16
// ones.
#define MADDRAW(at, lo, hi) \
	VPBROADCASTD at, Y11 \
	INT8PAIRS(Y11, lo, hi)

// PANELSETUP starts both panel kernels (the same arguments): R8 = a, DX =
// colSum, SI = sx, R11 = zx, DI = y, AX = ldy in bytes, Y10 = int16 ones
// (VPMADDWD's pair sums), Y14 = int32 128s (EPI4's zero-point fix).
#define PANELSETUP \
	MOVQ     a+16(FP), R8 \
	MOVQ     colSum+40(FP), DX \
	MOVQ     sx+64(FP), SI \
	MOVQ     zx+72(FP), R11 \
	MOVQ     y+80(FP), DI \
	MOVQ     ldy+88(FP), AX \
	SHLQ     $2, AX \
	VPCMPEQW Y10, Y10, Y10 \
	VPSRLW   $15, Y10, Y10 \
	VPCMPEQD Y14, Y14, Y14 \
	VPSRLD   $31, Y14, Y14 \
	VPSLLD   $7, Y14, Y14

// PANELSTART starts a row (or four) of either panel kernel: BX = the
// panel, R13 = the rows' bytes less 16 (the four-group loop's bound), R14 =
// 0 (the offset in each row), the sums Y0–Y7 zero.
#define PANELSTART \
	MOVQ  b+32(FP), BX \
	MOVQ  k4+0(FP), R13 \
	SHLQ  $2, R13 \
	XORQ  R14, R14 \
	VPXOR Y0, Y0, Y0 \
	VPXOR Y1, Y1, Y1 \
	VPXOR Y2, Y2, Y2 \
	VPXOR Y3, Y3, Y3 \
	VPXOR Y4, Y4, Y4 \
	VPXOR Y5, Y5, Y5 \
	VPXOR Y6, Y6, Y6 \
	VPXOR Y7, Y7, Y7 \
	SUBQ  $16, R13

// PANELGROUP adds one group of 4 depths of the four rows (R9, R10, CX,
// R12, each at byte off beyond R14) times the panel's group at byte boff
// beyond BX to the rows' sums (Y0–Y7).
#define PANELGROUP(off, boff) \
	VMOVDQU boff(BX), Y8 \
	VMOVDQU boff+32(BX), Y9 \
	MADDRAW(off(R9)(R14*1), Y0, Y1) \
	MADDRAW(off(R10)(R14*1), Y2, Y3) \
	MADDRAW(off(CX)(R14*1), Y4, Y5) \
	MADDRAW(off(R12)(R14*1), Y6, Y7)

// EPI4 turns the sums of row r (lo, hi: columns 0–7 and 8–15, sums of
// a_q·q) into float32: float32(acc − (zx[r] + 128)·colSum) · (sx[r]·scale),
// the bias added later; zx holds the zero points less 128 (the tiles'
// convention). R11 = zx, SI = sx, DX = colSum, R12 = scale, Y14 = int32
// 128s.
#define EPI4(lo, hi, off) \
	VPBROADCASTD off(R11), Y11 \
	VPADDD       Y14, Y11, Y11 \
	VPMULLD      (DX), Y11, Y12 \
	VPMULLD      32(DX), Y11, Y13 \
	VPSUBD       Y12, lo, lo \
	VPSUBD       Y13, hi, hi \
	VCVTDQ2PS    lo, lo \
	VCVTDQ2PS    hi, hi \
	VBROADCASTSS off(SI), Y11 \
	VMULPS       (R12), Y11, Y12 \
	VMULPS       32(R12), Y11, Y13 \
	VMULPS       Y12, lo, lo \
	VMULPS       Y13, hi, hi

// func int8Tile4x16AVX2(k4 int, a0, a1, a2, a3 *uint8, b *int8, tile *[64]int32)
TEXT ·int8Tile4x16AVX2(SB), NOSPLIT, $0-56
	MOVQ k4+0(FP), CX
	MOVQ a0+8(FP), R8
	MOVQ a1+16(FP), R9
	MOVQ a2+24(FP), R10
	MOVQ a3+32(FP), R11
	MOVQ b+40(FP), BX
	MOVQ tile+48(FP), DI

	// Y10 = int16 ones, for VPMADDWD's pair sums; Y14 = bytes 0x80.
	VPCMPEQW     Y10, Y10, Y10
	VPSRLW       $15, Y10, Y10
	MOVL         $0x80808080, AX
	VMOVD        AX, X14
	VPBROADCASTD X14, Y14
	VPXOR        Y0, Y0, Y0
	VPXOR    Y1, Y1, Y1
	VPXOR    Y2, Y2, Y2
	VPXOR    Y3, Y3, Y3
	VPXOR    Y4, Y4, Y4
	VPXOR    Y5, Y5, Y5
	VPXOR    Y6, Y6, Y6
	VPXOR    Y7, Y7, Y7
	TESTQ    CX, CX
	JE       store

loop:
	VMOVDQU (BX), Y8
	VMOVDQU 32(BX), Y9

	MADD(R8, Y0, Y1)

	MADD(R9, Y2, Y3)

	MADD(R10, Y4, Y5)

	MADD(R11, Y6, Y7)

	ADDQ $4, R8
	ADDQ $4, R9
	ADDQ $4, R10
	ADDQ $4, R11
	ADDQ $64, BX
	DECQ CX
	JNE  loop

store:
	VPADDD  (DI), Y0, Y0
	VPADDD  32(DI), Y1, Y1
	VPADDD  64(DI), Y2, Y2
	VPADDD  96(DI), Y3, Y3
	VPADDD  128(DI), Y4, Y4
	VPADDD  160(DI), Y5, Y5
	VPADDD  192(DI), Y6, Y6
	VPADDD  224(DI), Y7, Y7
	VMOVDQU Y0, (DI)
	VMOVDQU Y1, 32(DI)
	VMOVDQU Y2, 64(DI)
	VMOVDQU Y3, 96(DI)
	VMOVDQU Y4, 128(DI)
	VMOVDQU Y5, 160(DI)
	VMOVDQU Y6, 192(DI)
	VMOVDQU Y7, 224(DI)
	VZEROUPPER
	RET

// func int8Epilogue16AVX2(acc *int32, colSum *int32, scale *float32, bias *float32, zx int32, sx float32, y *float32)
// y[c] = float32(acc[c] − zx·colSum[c]) · (sx·scale[c]) [+ bias[c]], c < 16;
// bias nil: no addition.
TEXT ·int8Epilogue16AVX2(SB), NOSPLIT, $0-48
	MOVQ         acc+0(FP), SI
	MOVQ         colSum+8(FP), DX
	MOVQ         scale+16(FP), R8
	MOVQ         bias+24(FP), R9
	MOVL         zx+32(FP), AX
	VMOVD        AX, X14
	VPBROADCASTD X14, Y14
	VMOVSS       sx+36(FP), X15
	VBROADCASTSS X15, Y15
	MOVQ         y+40(FP), DI

	VPMULLD   (DX), Y14, Y0
	VPMULLD   32(DX), Y14, Y1
	VMOVDQU   (SI), Y2
	VMOVDQU   32(SI), Y3
	VPSUBD    Y0, Y2, Y2
	VPSUBD    Y1, Y3, Y3
	VCVTDQ2PS Y2, Y2
	VCVTDQ2PS Y3, Y3
	VMULPS    (R8), Y15, Y4
	VMULPS    32(R8), Y15, Y5
	VMULPS    Y4, Y2, Y2
	VMULPS    Y5, Y3, Y3
	TESTQ     R9, R9
	JE        nobias
	VADDPS    (R9), Y2, Y2
	VADDPS    32(R9), Y3, Y3

nobias:
	VMOVUPS Y2, (DI)
	VMOVUPS Y3, 32(DI)
	VZEROUPPER
	RET

// func int8RowRangeAVX2(x *float32, n int) (lo, hi float32, bad uint32)
// lo = min(0, x…), hi = max(0, x…) over n (a multiple of 8) values; bad is
// nonzero when one of them is a NaN or an infinity (x − x is then NaN).
TEXT ·int8RowRangeAVX2(SB), NOSPLIT, $0-28
	MOVQ   x+0(FP), SI
	MOVQ   n+8(FP), CX
	VXORPS Y0, Y0, Y0 // lo
	VXORPS Y1, Y1, Y1 // hi
	VXORPS Y2, Y2, Y2 // OR of x − x
	SHRQ   $3, CX
	JE     reduce

rloop:
	VMOVUPS (SI), Y3
	VMINPS  Y3, Y0, Y0
	VMAXPS  Y3, Y1, Y1
	VSUBPS  Y3, Y3, Y4
	VORPS   Y4, Y2, Y2
	ADDQ    $32, SI
	DECQ    CX
	JNE     rloop

reduce:
	VEXTRACTF128 $1, Y0, X3
	VMINPS       X3, X0, X0
	VEXTRACTF128 $1, Y1, X4
	VMAXPS       X4, X1, X1
	VEXTRACTF128 $1, Y2, X5
	VORPS        X5, X2, X2
	VPERMILPS    $0x4e, X0, X3
	VMINPS       X3, X0, X0
	VPERMILPS    $0xb1, X0, X3
	VMINPS       X3, X0, X0
	VPERMILPS    $0x4e, X1, X4
	VMAXPS       X4, X1, X1
	VPERMILPS    $0xb1, X1, X4
	VMAXPS       X4, X1, X1
	VPERMILPS    $0x4e, X2, X5
	VORPS        X5, X2, X2
	VPERMILPS    $0xb1, X2, X5
	VORPS        X5, X2, X2
	VMOVSS       X0, lo+16(FP)
	VMOVSS       X1, hi+20(FP)
	VMOVD        X2, AX
	MOVL         AX, bad+24(FP)
	VZEROUPPER
	RET

// func int8QuantizeAVX2(q *uint8, x *float32, n int, scale float32, zp int32)
// q[d] = clamp(round(x[d] / scale) + zp, 0, 255) for n (a multiple of 8)
// values: VDIVPS, VCVTPS2DQ (to nearest even, MXCSR's default), VPADDD,
// then VPACKSSDW and VPACKUSWB saturate to 0…255.
TEXT ·int8QuantizeAVX2(SB), NOSPLIT, $0-32
	MOVQ         q+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	VMOVSS       scale+24(FP), X6
	VBROADCASTSS X6, Y6
	MOVL         zp+28(FP), AX
	VMOVD        AX, X7
	VPBROADCASTD X7, Y7
	SHRQ         $3, CX
	JE           qdone

qloop:
	VMOVUPS      (SI), Y0
	VDIVPS       Y6, Y0, Y0
	VCVTPS2DQ    Y0, Y0
	VPADDD       Y7, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPACKSSDW    X1, X0, X0
	VPACKUSWB    X0, X0, X0
	VMOVQ        X0, (DI)
	ADDQ         $32, SI
	ADDQ         $8, DI
	DECQ         CX
	JNE          qloop

qdone:
	VZEROUPPER
	RET

// func int8PanelRaw4x16AVX2(k4, rows4 int, a *uint8, lda int, b *int8, colSum *int32, scale *float32, bias *float32, sx *float32, zx *int32, y *float32, ldy int)
// int8Panel4x16AVX2 on the quantized rows as they are (a_q, 0…255) and
// weights within ±Int8WeightMax: VPMADDUBSW's pairs, at most 2·255·63,
// never saturate, so no sign step. The sums are of a_q·q; zx holds the
// zero points less 128 (the other kernels' convention), added back.
TEXT ·int8PanelRaw4x16AVX2(SB), NOSPLIT, $0-96
	PANELSETUP
	MOVQ     rows4+8(FP), R15
	TESTQ    R15, R15
	JE       prdone

prrow:
	MOVQ  lda+24(FP), R13
	MOVQ  R8, R9
	LEAQ  (R8)(R13*1), R10
	LEAQ  (R8)(R13*2), CX
	LEAQ  (R10)(R13*2), R12
	PANELSTART
	JL    prtail

	// Four groups a round, the rows read at one offset: a sixth fewer
	// instructions than a group with four pointer steps, and 1.14× the
	// kernel's speed (BenchmarkInt8Panel, serving/PROFILE.md).
prloop:
	PANELGROUP(0, 0)
	PANELGROUP(4, 64)
	PANELGROUP(8, 128)
	PANELGROUP(12, 192)
	ADDQ    $256, BX
	ADDQ    $16, R14
	CMPQ    R14, R13
	JLE     prloop

prtail:
	ADDQ $16, R13

prone:
	CMPQ R14, R13
	JGE  prepi
	PANELGROUP(0, 0)
	ADDQ $64, BX
	ADDQ $4, R14
	JMP  prone

prepi:
	MOVQ scale+48(FP), R12
	EPI4(Y0, Y1, 0)
	EPI4(Y2, Y3, 4)
	EPI4(Y4, Y5, 8)
	EPI4(Y6, Y7, 12)
	MOVQ  bias+56(FP), BX
	TESTQ BX, BX
	JE    prstore
	VMOVUPS (BX), Y8
	VMOVUPS 32(BX), Y9
	VADDPS  Y8, Y0, Y0
	VADDPS  Y9, Y1, Y1
	VADDPS  Y8, Y2, Y2
	VADDPS  Y9, Y3, Y3
	VADDPS  Y8, Y4, Y4
	VADDPS  Y9, Y5, Y5
	VADDPS  Y8, Y6, Y6
	VADDPS  Y9, Y7, Y7

prstore:
	LEAQ    (DI)(AX*1), R9
	LEAQ    (DI)(AX*2), R10
	LEAQ    (R9)(AX*2), CX
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, (R9)
	VMOVUPS Y3, 32(R9)
	VMOVUPS Y4, (R10)
	VMOVUPS Y5, 32(R10)
	VMOVUPS Y6, (CX)
	VMOVUPS Y7, 32(CX)

	MOVQ lda+24(FP), R13
	LEAQ (R8)(R13*4), R8
	LEAQ (DI)(AX*4), DI
	ADDQ $16, SI
	ADDQ $16, R11
	DECQ R15
	JNE  prrow

prdone:
	VZEROUPPER
	RET


// func int8PanelRaw1x16AVX2(k4, rows int, a *uint8, lda int, b *int8, colSum *int32, scale *float32, bias *float32, sx *float32, zx *int32, y *float32, ldy int)
// int8PanelRaw4x16AVX2 one row at a time, for the rows a row block has
// past its last four: the same integer sums (four groups a round into four
// pairs of sums, added at the end: exact) and the same epilogue (EPI4), so
// the same bits, at a quarter of the work of a 4-row tile for one row.
TEXT ·int8PanelRaw1x16AVX2(SB), NOSPLIT, $0-96
	PANELSETUP
	MOVQ     rows+8(FP), R15
	TESTQ    R15, R15
	JE       p1done

p1row:
	PANELSTART
	JL    p1tail

	// Four groups a round, each into its own pair of sums: four chains
	// instead of one.
p1loop:
	VMOVDQU 0(BX), Y8
	VMOVDQU 32(BX), Y9
	MADDRAW(0(R8)(R14*1), Y0, Y1)
	VMOVDQU 64(BX), Y8
	VMOVDQU 96(BX), Y9
	MADDRAW(4(R8)(R14*1), Y2, Y3)
	VMOVDQU 128(BX), Y8
	VMOVDQU 160(BX), Y9
	MADDRAW(8(R8)(R14*1), Y4, Y5)
	VMOVDQU 192(BX), Y8
	VMOVDQU 224(BX), Y9
	MADDRAW(12(R8)(R14*1), Y6, Y7)
	ADDQ    $256, BX
	ADDQ    $16, R14
	CMPQ    R14, R13
	JLE     p1loop

p1tail:
	ADDQ $16, R13

p1one:
	CMPQ    R14, R13
	JGE     p1sum
	VMOVDQU (BX), Y8
	VMOVDQU 32(BX), Y9
	MADDRAW(0(R8)(R14*1), Y0, Y1)
	ADDQ    $64, BX
	ADDQ    $4, R14
	JMP     p1one

p1sum:
	VPADDD Y2, Y0, Y0
	VPADDD Y3, Y1, Y1
	VPADDD Y6, Y4, Y4
	VPADDD Y7, Y5, Y5
	VPADDD Y4, Y0, Y0
	VPADDD Y5, Y1, Y1
	MOVQ   scale+48(FP), R12
	EPI4(Y0, Y1, 0)
	MOVQ   bias+56(FP), BX
	TESTQ  BX, BX
	JE     p1store
	VMOVUPS (BX), Y8
	VMOVUPS 32(BX), Y9
	VADDPS  Y8, Y0, Y0
	VADDPS  Y9, Y1, Y1

p1store:
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)

	MOVQ lda+24(FP), R13
	ADDQ R13, R8
	ADDQ AX, DI
	ADDQ $4, SI
	ADDQ $4, R11
	DECQ R15
	JNE  p1row

p1done:
	VZEROUPPER
	RET
