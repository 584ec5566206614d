//go:build amd64 && !purego

#include "textflag.h"

// func roundBF16AVX512(dst, src *float32, rows, n, ldd, lds int, swap bool)
//
// For each of rows rows r: dst[r·ldd + i] = RoundBF16(src[r·lds + i]) for
// i < n, or dst[r·ldd + i^1] = … when swap (pairs of elements exchanged;
// n is then even, the caller padding an odd row). The rounding is
// ToBF16's integer method: to nearest even, subnormals to signed zero,
// NaNs made quiet.
TEXT ·roundBF16AVX512(SB), NOSPLIT, $0-49
	MOVQ dst+0(FP), R8
	MOVQ src+8(FP), R9
	MOVQ rows+16(FP), R10
	MOVQ ldd+32(FP), R11
	SHLQ $2, R11
	MOVQ lds+40(FP), R12
	SHLQ $2, R12
	MOVBLZX swap+48(FP), DX
	MOVL $0x7fff, AX
	VPBROADCASTD AX, Z20
	MOVL $1, AX
	VPBROADCASTD AX, Z21
	MOVL $0x7f800000, AX
	VPBROADCASTD AX, Z22
	MOVL $0x7fffffff, AX
	VPBROADCASTD AX, Z23
	MOVL $0xffff0000, AX
	VPBROADCASTD AX, Z24
	MOVL $0x80000000, AX
	VPBROADCASTD AX, Z25
	MOVL $0x00400000, AX
	VPBROADCASTD AX, Z26
row:
	TESTQ R10, R10
	JZ done
	MOVQ R8, DI
	MOVQ R9, SI
	MOVQ n+24(FP), CX
	MOVL $0xffff, AX
	KMOVW AX, K3
loop:
	CMPQ CX, $16
	JGE full
	TESTQ CX, CX
	JZ nextrow
	// The last 1–15 elements, under mask K3.
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K3
	MOVQ $16, CX
full:
	VMOVDQU32.Z (SI), K3, Z0
	VPSRLD $16, Z0, Z1
	VPANDD Z21, Z1, Z1
	VPADDD Z20, Z1, Z1
	VPADDD Z0, Z1, Z1
	VPANDD Z24, Z1, Z1
	VPTESTNMD Z22, Z0, K1
	VPANDD Z25, Z0, K1, Z1
	VPANDD Z23, Z0, Z2
	VPCMPUD $6, Z22, Z2, K2
	VPORD Z26, Z0, Z3
	VPANDD Z24, Z3, K2, Z1
	TESTQ DX, DX
	JZ store
	VPSHUFD $0xb1, Z1, Z1
store:
	VMOVDQU32 Z1, K3, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JMP loop
nextrow:
	ADDQ R11, R8
	ADDQ R12, R9
	DECQ R10
	JMP row
done:
	VZEROUPPER
	RET
