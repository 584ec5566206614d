//go:build amd64 && !purego

#include "textflag.h"

// AMX has no mnemonics in Go's assembler: each instruction is its bytes
// (from GNU as), with the registers fixed as in the comment beside it.
// Tiles: tmm0..3 are C's 2×2 blocks of 16×16 float32, tmm4/tmm5 A's rows
// 0–15 and 16–31 (16 pairs each), tmm6/tmm7 B's columns 0–15 and 16–31
// (16 rows of pairs each).

#define LDTILECFG_AX      BYTE $0xc4; BYTE $0xe2; BYTE $0x78; BYTE $0x49; BYTE $0x00
#define TILERELEASE       BYTE $0xc4; BYTE $0xe2; BYTE $0x78; BYTE $0x49; BYTE $0xc0
#define TILEZERO_0        BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xc0
#define TILEZERO_1        BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xc8
#define TILEZERO_2        BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xd0
#define TILEZERO_3        BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xd8
#define TILELOADD_4_SI_DX BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x4b; BYTE $0x24; BYTE $0x16
#define TILELOADD_5_R8_DX BYTE $0xc4; BYTE $0xc2; BYTE $0x7b; BYTE $0x4b; BYTE $0x2c; BYTE $0x10
#define TILELOADD_6_DI_R9 BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x34; BYTE $0x0f
#define TILELOADD_7_R10_R9 BYTE $0xc4; BYTE $0x82; BYTE $0x7b; BYTE $0x4b; BYTE $0x3c; BYTE $0x0a
#define TDPBF16PS_0_4_6   BYTE $0xc4; BYTE $0xe2; BYTE $0x4a; BYTE $0x5c; BYTE $0xc4
#define TDPBF16PS_1_4_7   BYTE $0xc4; BYTE $0xe2; BYTE $0x42; BYTE $0x5c; BYTE $0xcc
#define TDPBF16PS_2_5_6   BYTE $0xc4; BYTE $0xe2; BYTE $0x4a; BYTE $0x5c; BYTE $0xd5
#define TDPBF16PS_3_5_7   BYTE $0xc4; BYTE $0xe2; BYTE $0x42; BYTE $0x5c; BYTE $0xdd
#define TILELOADD_0_CX_R11   BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x04; BYTE $0x19
#define TILELOADD_1_R12_R11  BYTE $0xc4; BYTE $0x82; BYTE $0x7b; BYTE $0x4b; BYTE $0x0c; BYTE $0x1c
#define TILELOADD_2_R12_R11  BYTE $0xc4; BYTE $0x82; BYTE $0x7b; BYTE $0x4b; BYTE $0x14; BYTE $0x1c
#define TILELOADD_3_R12_R11  BYTE $0xc4; BYTE $0x82; BYTE $0x7b; BYTE $0x4b; BYTE $0x1c; BYTE $0x1c
#define TILESTORED_0_CX_R11  BYTE $0xc4; BYTE $0xa2; BYTE $0x7a; BYTE $0x4b; BYTE $0x04; BYTE $0x19
#define TILESTORED_1_R12_R11 BYTE $0xc4; BYTE $0x82; BYTE $0x7a; BYTE $0x4b; BYTE $0x0c; BYTE $0x1c
#define TILESTORED_2_R12_R11 BYTE $0xc4; BYTE $0x82; BYTE $0x7a; BYTE $0x4b; BYTE $0x14; BYTE $0x1c
#define TILESTORED_3_R12_R11 BYTE $0xc4; BYTE $0x82; BYTE $0x7a; BYTE $0x4b; BYTE $0x1c; BYTE $0x1c

// func amxTiles32(cfg *byte, a *uint16, lda int, b *uint32, kb int, c *float32, ldc int, nb int, pstride int, load int)
//
// For each of nb blocks of 32 columns: C[0:32, 32j:32j+32] = the TDPBF16PS
// sums over kb blocks of 16 pairs, from zero (load 0) or from C's own
// values (load 1), of A's 32 rows (row stride lda bytes, 64 bytes per
// block) times B's 16-column panels 2j and 2j+1 (kb·16 rows of 16 pairs
// each, pstride bytes from one panel's start to the next); C's row stride
// is ldc bytes. The tile state lives only inside this call.
TEXT ·amxTiles32(SB), NOSPLIT, $0-80
	MOVQ cfg+0(FP), AX
	LDTILECFG_AX
	MOVQ lda+16(FP), DX
	MOVQ b+24(FP), AX
	MOVQ c+40(FP), CX
	MOVQ ldc+48(FP), R11
	MOVQ nb+56(FP), R13
	MOVQ $64, R9
nblock:
	CMPQ load+72(FP), $0
	JEQ  zero
	TILELOADD_0_CX_R11
	LEAQ 64(CX), R12
	TILELOADD_1_R12_R11
	MOVQ R11, R12
	SHLQ $4, R12
	ADDQ CX, R12
	TILELOADD_2_R12_R11
	ADDQ $64, R12
	TILELOADD_3_R12_R11
	JMP  ready
zero:
	TILEZERO_0
	TILEZERO_1
	TILEZERO_2
	TILEZERO_3
ready:
	MOVQ a+8(FP), SI
	MOVQ DX, R8
	SHLQ $4, R8
	ADDQ SI, R8
	MOVQ AX, DI
	MOVQ pstride+64(FP), R10
	ADDQ AX, R10
	MOVQ kb+32(FP), BX
kblock:
	TILELOADD_4_SI_DX
	TILELOADD_5_R8_DX
	TILELOADD_6_DI_R9
	TILELOADD_7_R10_R9
	TDPBF16PS_0_4_6
	TDPBF16PS_1_4_7
	TDPBF16PS_2_5_6
	TDPBF16PS_3_5_7
	ADDQ $64, SI
	ADDQ $64, R8
	ADDQ $1024, DI
	ADDQ $1024, R10
	DECQ BX
	JNZ  kblock
	TILESTORED_0_CX_R11
	LEAQ 64(CX), R12
	TILESTORED_1_R12_R11
	MOVQ R11, R12
	SHLQ $4, R12
	ADDQ CX, R12
	TILESTORED_2_R12_R11
	ADDQ $64, R12
	TILESTORED_3_R12_R11
	MOVQ pstride+64(FP), R12
	SHLQ $1, R12
	ADDQ R12, AX
	ADDQ $128, CX
	DECQ R13
	JNZ  nblock
	TILERELEASE
	RET
