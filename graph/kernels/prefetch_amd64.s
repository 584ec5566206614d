//go:build amd64 && !purego

#include "textflag.h"

// func prefetchL2(p *float32, n int)
// Issues PREFETCHT1 for every 64-byte line of p[:n].
TEXT ·prefetchL2(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	LEAQ (SI)(CX*4), CX
loop:
	CMPQ SI, CX
	JGE  done
	PREFETCHT1 (SI)
	ADDQ $64, SI
	JMP  loop
done:
	RET
