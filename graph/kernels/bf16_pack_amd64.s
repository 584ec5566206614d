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
