// MXCSR for the bfloat16 arithmetic (fmaFTZ's): the assembly that needs it
// includes this file and reserves old-8(SP) and new-4(SP) in its frame.

// SETFTZ saves MXCSR at old-8(SP) and sets DAZ (bit 6), FTZ (bit 15) and
// rounding to nearest even (bits 13–14 clear). It clobbers AX.
#define SETFTZ \
	STMXCSR old-8(SP) \
	MOVL old-8(SP), AX \
	ORL $0x8040, AX \
	ANDL $0xffff9fff, AX \
	MOVL AX, new-4(SP) \
	LDMXCSR new-4(SP)

// RESTOREFTZ puts back the MXCSR that SETFTZ saved.
#define RESTOREFTZ LDMXCSR old-8(SP)
