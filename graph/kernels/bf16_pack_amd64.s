//go:build amd64 && !purego

#include "textflag.h"

// ROUND16 sets Z1 to the 16 float32 of Z0 rounded to bfloat16 (the
// upper halves; lower halves zero) by ToBF16's integer method, as
// roundBF16AVX512: to nearest even, subnormals to signed zero, NaNs made
// quiet. Constants in Z20–Z26 (LOADCONSTS); K1, K2, Z2, Z3 are clobbered.
#define ROUND16 \
	VPSRLD $16, Z0, Z1 \
	VPANDD Z21, Z1, Z1 \
	VPADDD Z20, Z1, Z1 \
	VPADDD Z0, Z1, Z1 \
	VPANDD Z24, Z1, Z1 \
	VPTESTNMD Z22, Z0, K1 \
	VPANDD Z25, Z0, K1, Z1 \
	VPANDD Z23, Z0, Z2 \
	VPCMPUD $6, Z22, Z2, K2 \
	VPORD Z26, Z0, Z3 \
	VPANDD Z24, Z3, K2, Z1

#define LOADCONSTS \
	MOVL $0x7fff, AX \
	VPBROADCASTD AX, Z20 \
	MOVL $1, AX \
	VPBROADCASTD AX, Z21 \
	MOVL $0x7f800000, AX \
	VPBROADCASTD AX, Z22 \
	MOVL $0x7fffffff, AX \
	VPBROADCASTD AX, Z23 \
	MOVL $0xffff0000, AX \
	VPBROADCASTD AX, Z24 \
	MOVL $0x80000000, AX \
	VPBROADCASTD AX, Z25 \
	MOVL $0x00400000, AX \
	VPBROADCASTD AX, Z26

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
	LOADCONSTS
	MOVL $0xffff, AX
	KMOVW AX, K3
wloop:
	TAILMASK(wfull, wdone)
wfull:
	VMOVDQU32.Z (SI), K3, Z0
	ROUND16
	VPSRLD $16, Z1, Z1
	VPMOVDW Z1, K3, (DI)
	ADDQ $64, SI
	ADDQ $32, DI
	SUBQ $16, CX
	JMP wloop
wdone:
	VZEROUPPER
	RET

// func pairsBF16AVX512(dst *uint32, lo, hi *float32, n int)
//
// dst[i] = ToBF16(lo[i]) | ToBF16(hi[i])<<16 for i < n; a nil hi is +0.
TEXT ·pairsBF16AVX512(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ lo+8(FP), SI
	MOVQ hi+16(FP), DX
	MOVQ n+24(FP), CX
	LOADCONSTS
	MOVL $0xffff, AX
	KMOVW AX, K3
ploop:
	TAILMASK(pfull, pdone)
pfull:
	VPXORD Z4, Z4, Z4
	TESTQ DX, DX
	JZ plo
	VMOVDQU32.Z (DX), K3, Z0
	ROUND16
	VMOVDQA32 Z1, Z4
	ADDQ $64, DX
plo:
	VMOVDQU32.Z (SI), K3, Z0
	ROUND16
	VPSRLD $16, Z1, Z1
	VPORD Z4, Z1, Z1
	VMOVDQU32 Z1, K3, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JMP ploop
pdone:
	VZEROUPPER
	RET

// func epilogueFTZAVX512(row, acc *float32, n int, alpha, beta float32)
//
// row[j] = alpha·acc[j] + beta·row[j] (fused; acc's term alone when beta is
// 0) for j < n, with MXCSR's DAZ and FTZ set and rounding to nearest even:
// fmaFTZ's arithmetic, as epilogueFTZ.
TEXT ·epilogueFTZAVX512(SB), NOSPLIT, $8-32
	STMXCSR old-8(SP)
	MOVL old-8(SP), AX
	ORL $0x8040, AX
	ANDL $0xffff9fff, AX
	MOVL AX, new-4(SP)
	LDMXCSR new-4(SP)
	MOVQ row+0(FP), DI
	MOVQ acc+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS alpha+24(FP), Z30
	VBROADCASTSS beta+28(FP), Z31
	MOVL beta+28(FP), DX
	ANDL $0x7fffffff, DX
	MOVL $0xffff, AX
	KMOVW AX, K3
eloop:
	TAILMASK(efull, edone)
efull:
	VMOVUPS.Z (SI), K3, Z0
	VMULPS Z30, Z0, Z0
	TESTL DX, DX
	JZ estore
	VMOVUPS.Z (DI), K3, Z1
	VFMADD231PS Z31, Z1, Z0
estore:
	VMOVUPS Z0, K3, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JMP eloop
edone:
	LDMXCSR old-8(SP)
	VZEROUPPER
	RET
