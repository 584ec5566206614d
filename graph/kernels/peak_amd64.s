//go:build amd64 && !purego

#include "textflag.h"

// The peak loops: one instruction sequence of the products alone, from
// registers, on independent chains, n rounds (peak.go).

// func fmaPeakAVX2(n int)
// 12 independent VFMADD231PS on 8 lanes a round: 192 FLOPs.
TEXT ·fmaPeakAVX2(SB), NOSPLIT, $0-8
	MOVQ   n+0(FP), CX
	VXORPS Y14, Y14, Y14
	VXORPS Y15, Y15, Y15

fma2:
	VFMADD231PS Y14, Y15, Y0
	VFMADD231PS Y14, Y15, Y1
	VFMADD231PS Y14, Y15, Y2
	VFMADD231PS Y14, Y15, Y3
	VFMADD231PS Y14, Y15, Y4
	VFMADD231PS Y14, Y15, Y5
	VFMADD231PS Y14, Y15, Y6
	VFMADD231PS Y14, Y15, Y7
	VFMADD231PS Y14, Y15, Y8
	VFMADD231PS Y14, Y15, Y9
	VFMADD231PS Y14, Y15, Y10
	VFMADD231PS Y14, Y15, Y11
	DECQ        CX
	JNZ         fma2
	VZEROUPPER
	RET

// func fmaPeakAVX512(n int)
// 24 independent VFMADD231PS on 16 lanes a round: 768 FLOPs.
TEXT ·fmaPeakAVX512(SB), NOSPLIT, $0-8
	MOVQ   n+0(FP), CX
	VPXORD Z30, Z30, Z30
	VPXORD Z31, Z31, Z31

fma5:
	VFMADD231PS Z30, Z31, Z0
	VFMADD231PS Z30, Z31, Z1
	VFMADD231PS Z30, Z31, Z2
	VFMADD231PS Z30, Z31, Z3
	VFMADD231PS Z30, Z31, Z4
	VFMADD231PS Z30, Z31, Z5
	VFMADD231PS Z30, Z31, Z6
	VFMADD231PS Z30, Z31, Z7
	VFMADD231PS Z30, Z31, Z8
	VFMADD231PS Z30, Z31, Z9
	VFMADD231PS Z30, Z31, Z10
	VFMADD231PS Z30, Z31, Z11
	VFMADD231PS Z30, Z31, Z12
	VFMADD231PS Z30, Z31, Z13
	VFMADD231PS Z30, Z31, Z14
	VFMADD231PS Z30, Z31, Z15
	VFMADD231PS Z30, Z31, Z16
	VFMADD231PS Z30, Z31, Z17
	VFMADD231PS Z30, Z31, Z18
	VFMADD231PS Z30, Z31, Z19
	VFMADD231PS Z30, Z31, Z20
	VFMADD231PS Z30, Z31, Z21
	VFMADD231PS Z30, Z31, Z22
	VFMADD231PS Z30, Z31, Z23
	DECQ        CX
	JNZ         fma5
	VZEROUPPER
	RET

// EXACT is the int8 tile's arithmetic for one row and a group of 4 depths
// (int8_amd64.s's MADDSA without its two broadcasts): 64 multiply-adds.
#define EXACT(lo, hi) \
	VPSIGNB    Y11, Y8, Y12 \
	VPSIGNB    Y11, Y9, Y13 \
	VPMADDUBSW Y12, Y14, Y12 \
	VPMADDUBSW Y13, Y14, Y13 \
	VPMADDWD   Y10, Y12, Y12 \
	VPMADDWD   Y10, Y13, Y13 \
	VPADDD     Y12, lo, lo \
	VPADDD     Y13, hi, hi

// func int8ExactPeakAVX2(n int)
// 4 rows of EXACT a round: 256 multiply-adds.
TEXT ·int8ExactPeakAVX2(SB), NOSPLIT, $0-8
	MOVQ  n+0(FP), CX
	VPXOR Y8, Y8, Y8
	VPXOR Y9, Y9, Y9
	VPXOR Y10, Y10, Y10
	VPXOR Y11, Y11, Y11
	VPXOR Y14, Y14, Y14

exact:
	EXACT(Y0, Y1)
	EXACT(Y2, Y3)
	EXACT(Y4, Y5)
	EXACT(Y6, Y7)
	DECQ CX
	JNZ  exact
	VZEROUPPER
	RET

// SAT is EXACT without the sign step: VPMADDUBSW on the unsigned bytes as
// they are, whose int16 pair sums saturate when both products are large
// (2·255·127 > 32767): AVX2's u8×s8 sequence in ONNX Runtime's MLAS.
#define SAT(lo, hi) \
	VPMADDUBSW Y8, Y14, Y12 \
	VPMADDUBSW Y9, Y14, Y13 \
	VPMADDWD   Y10, Y12, Y12 \
	VPMADDWD   Y10, Y13, Y13 \
	VPADDD     Y12, lo, lo \
	VPADDD     Y13, hi, hi

// func int8SaturatingPeakAVX2(n int)
// 4 rows of SAT a round: 256 multiply-adds.
TEXT ·int8SaturatingPeakAVX2(SB), NOSPLIT, $0-8
	MOVQ  n+0(FP), CX
	VPXOR Y8, Y8, Y8
	VPXOR Y9, Y9, Y9
	VPXOR Y10, Y10, Y10
	VPXOR Y14, Y14, Y14

sat:
	SAT(Y0, Y1)
	SAT(Y2, Y3)
	SAT(Y4, Y5)
	SAT(Y6, Y7)
	DECQ CX
	JNZ  sat
	VZEROUPPER
	RET
