//go:build amd64 && !purego

#include "textflag.h"
#include "ftz_amd64.h"

// func addFTZAVX512(dst, src *float32, n int)
//
// dst[i] += src[i] for i < n, a multiple of 16, under DAZ and FTZ.
TEXT ·addFTZAVX512(SB), NOSPLIT, $8-24
	SETFTZ
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $4, CX
	JZ a512done
a512loop:
	VMOVUPS (DI), Z0
	VADDPS (SI), Z0, Z0
	VMOVUPS Z0, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ a512loop
a512done:
	RESTOREFTZ
	VZEROUPPER
	RET

// func addFTZAVX2(dst, src *float32, n int)
//
// dst[i] += src[i] for i < n, a multiple of 8, under DAZ and FTZ.
TEXT ·addFTZAVX2(SB), NOSPLIT, $8-24
	SETFTZ
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $3, CX
	JZ a2done
a2loop:
	VMOVUPS (DI), Y0
	VADDPS (SI), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ a2loop
a2done:
	RESTOREFTZ
	VZEROUPPER
	RET

// func epilogueFTZAVX2(row, acc *float32, n int, alpha, beta float32)
//
// row[j] = alpha·acc[j] + beta·row[j] (fused; acc's term alone when beta is
// 0) for j < n, a multiple of 8, under DAZ and FTZ.
TEXT ·epilogueFTZAVX2(SB), NOSPLIT, $8-32
	SETFTZ
	MOVQ row+0(FP), DI
	MOVQ acc+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS alpha+24(FP), Y14
	VBROADCASTSS beta+28(FP), Y15
	MOVL beta+28(FP), DX
	ANDL $0x7fffffff, DX
	SHRQ $3, CX
	JZ e2done
e2loop:
	VMOVUPS (SI), Y0
	VMULPS Y14, Y0, Y0
	TESTL DX, DX
	JZ e2store
	VMOVUPS (DI), Y1
	VFMADD231PS Y15, Y1, Y0
e2store:
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ e2loop
e2done:
	RESTOREFTZ
	VZEROUPPER
	RET
