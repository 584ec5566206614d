//go:build amd64 && !purego

// AVX2+FMA versions of the vector primitives in vec_generic.go. Each
// processes 8 floats per step and finishes the last n mod 8 one at a time
// with the same code on the low lane, so there is no separate tail path.

#include "textflag.h"

// one: 1.0 ×8
DATA one<>+0(SB)/8, $0x3f8000003f800000
DATA one<>+8(SB)/8, $0x3f8000003f800000
DATA one<>+16(SB)/8, $0x3f8000003f800000
DATA one<>+24(SB)/8, $0x3f8000003f800000
GLOBL one<>(SB), RODATA|NOPTR, $32

// half: 0.5 ×8
DATA half<>+0(SB)/8, $0x3f0000003f000000
DATA half<>+8(SB)/8, $0x3f0000003f000000
DATA half<>+16(SB)/8, $0x3f0000003f000000
DATA half<>+24(SB)/8, $0x3f0000003f000000
GLOBL half<>(SB), RODATA|NOPTR, $32

// mhalf: -0.5 ×8
DATA mhalf<>+0(SB)/8, $0xbf000000bf000000
DATA mhalf<>+8(SB)/8, $0xbf000000bf000000
DATA mhalf<>+16(SB)/8, $0xbf000000bf000000
DATA mhalf<>+24(SB)/8, $0xbf000000bf000000
GLOBL mhalf<>(SB), RODATA|NOPTR, $32

// absmask: 0x7fffffff ×8
DATA absmask<>+0(SB)/8, $0x7fffffff7fffffff
DATA absmask<>+8(SB)/8, $0x7fffffff7fffffff
DATA absmask<>+16(SB)/8, $0x7fffffff7fffffff
DATA absmask<>+24(SB)/8, $0x7fffffff7fffffff
GLOBL absmask<>(SB), RODATA|NOPTR, $32

// i127: 0x7f ×8
DATA i127<>+0(SB)/8, $0x0000007f0000007f
DATA i127<>+8(SB)/8, $0x0000007f0000007f
DATA i127<>+16(SB)/8, $0x0000007f0000007f
DATA i127<>+24(SB)/8, $0x0000007f0000007f
GLOBL i127<>(SB), RODATA|NOPTR, $32

// neginf: 0xff800000 ×8
DATA neginf<>+0(SB)/8, $0xff800000ff800000
DATA neginf<>+8(SB)/8, $0xff800000ff800000
DATA neginf<>+16(SB)/8, $0xff800000ff800000
DATA neginf<>+24(SB)/8, $0xff800000ff800000
GLOBL neginf<>(SB), RODATA|NOPTR, $32

// explo: -104.0 ×8
DATA explo<>+0(SB)/8, $0xc2d00000c2d00000
DATA explo<>+8(SB)/8, $0xc2d00000c2d00000
DATA explo<>+16(SB)/8, $0xc2d00000c2d00000
DATA explo<>+24(SB)/8, $0xc2d00000c2d00000
GLOBL explo<>(SB), RODATA|NOPTR, $32

// exphi: 89.0 ×8
DATA exphi<>+0(SB)/8, $0x42b2000042b20000
DATA exphi<>+8(SB)/8, $0x42b2000042b20000
DATA exphi<>+16(SB)/8, $0x42b2000042b20000
DATA exphi<>+24(SB)/8, $0x42b2000042b20000
GLOBL exphi<>(SB), RODATA|NOPTR, $32

// log2e: 1.4426950408889634 ×8
DATA log2e<>+0(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA log2e<>+8(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA log2e<>+16(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA log2e<>+24(SB)/8, $0x3fb8aa3b3fb8aa3b
GLOBL log2e<>(SB), RODATA|NOPTR, $32

// ln2hi: 0.693359375 ×8
DATA ln2hi<>+0(SB)/8, $0x3f3180003f318000
DATA ln2hi<>+8(SB)/8, $0x3f3180003f318000
DATA ln2hi<>+16(SB)/8, $0x3f3180003f318000
DATA ln2hi<>+24(SB)/8, $0x3f3180003f318000
GLOBL ln2hi<>(SB), RODATA|NOPTR, $32

// ln2lo: -0.00021219444 ×8
DATA ln2lo<>+0(SB)/8, $0xb95e8083b95e8083
DATA ln2lo<>+8(SB)/8, $0xb95e8083b95e8083
DATA ln2lo<>+16(SB)/8, $0xb95e8083b95e8083
DATA ln2lo<>+24(SB)/8, $0xb95e8083b95e8083
GLOBL ln2lo<>(SB), RODATA|NOPTR, $32

// p0: 0.000198756915 ×8
DATA p0<>+0(SB)/8, $0x3950696739506967
DATA p0<>+8(SB)/8, $0x3950696739506967
DATA p0<>+16(SB)/8, $0x3950696739506967
DATA p0<>+24(SB)/8, $0x3950696739506967
GLOBL p0<>(SB), RODATA|NOPTR, $32

// p1: 0.0013981999507 ×8
DATA p1<>+0(SB)/8, $0x3ab743ce3ab743ce
DATA p1<>+8(SB)/8, $0x3ab743ce3ab743ce
DATA p1<>+16(SB)/8, $0x3ab743ce3ab743ce
DATA p1<>+24(SB)/8, $0x3ab743ce3ab743ce
GLOBL p1<>(SB), RODATA|NOPTR, $32

// p2: 0.0083334519073 ×8
DATA p2<>+0(SB)/8, $0x3c0889083c088908
DATA p2<>+8(SB)/8, $0x3c0889083c088908
DATA p2<>+16(SB)/8, $0x3c0889083c088908
DATA p2<>+24(SB)/8, $0x3c0889083c088908
GLOBL p2<>(SB), RODATA|NOPTR, $32

// p3: 0.041665795894 ×8
DATA p3<>+0(SB)/8, $0x3d2aa9c13d2aa9c1
DATA p3<>+8(SB)/8, $0x3d2aa9c13d2aa9c1
DATA p3<>+16(SB)/8, $0x3d2aa9c13d2aa9c1
DATA p3<>+24(SB)/8, $0x3d2aa9c13d2aa9c1
GLOBL p3<>(SB), RODATA|NOPTR, $32

// p4: 0.16666665459 ×8
DATA p4<>+0(SB)/8, $0x3e2aaaaa3e2aaaaa
DATA p4<>+8(SB)/8, $0x3e2aaaaa3e2aaaaa
DATA p4<>+16(SB)/8, $0x3e2aaaaa3e2aaaaa
DATA p4<>+24(SB)/8, $0x3e2aaaaa3e2aaaaa
GLOBL p4<>(SB), RODATA|NOPTR, $32

// p5: 0.50000001201 ×8
DATA p5<>+0(SB)/8, $0x3f0000003f000000
DATA p5<>+8(SB)/8, $0x3f0000003f000000
DATA p5<>+16(SB)/8, $0x3f0000003f000000
DATA p5<>+24(SB)/8, $0x3f0000003f000000
GLOBL p5<>(SB), RODATA|NOPTR, $32

// xmax: 14.142135 ×8
DATA xmax<>+0(SB)/8, $0x4162462f4162462f
DATA xmax<>+8(SB)/8, $0x4162462f4162462f
DATA xmax<>+16(SB)/8, $0x4162462f4162462f
DATA xmax<>+24(SB)/8, $0x4162462f4162462f
GLOBL xmax<>(SB), RODATA|NOPTR, $32

// emax: 15.0 ×8
DATA emax<>+0(SB)/8, $0x4170000041700000
DATA emax<>+8(SB)/8, $0x4170000041700000
DATA emax<>+16(SB)/8, $0x4170000041700000
DATA emax<>+24(SB)/8, $0x4170000041700000
GLOBL emax<>(SB), RODATA|NOPTR, $32

// tscale: 0.35355339059327373 ×8
DATA tscale<>+0(SB)/8, $0x3eb504f33eb504f3
DATA tscale<>+8(SB)/8, $0x3eb504f33eb504f3
DATA tscale<>+16(SB)/8, $0x3eb504f33eb504f3
DATA tscale<>+24(SB)/8, $0x3eb504f33eb504f3
GLOBL tscale<>(SB), RODATA|NOPTR, $32

// invsqrt2pi: 0.3989422804014327 ×8
DATA invsqrt2pi<>+0(SB)/8, $0x3ecc422a3ecc422a
DATA invsqrt2pi<>+8(SB)/8, $0x3ecc422a3ecc422a
DATA invsqrt2pi<>+16(SB)/8, $0x3ecc422a3ecc422a
DATA invsqrt2pi<>+24(SB)/8, $0x3ecc422a3ecc422a
GLOBL invsqrt2pi<>(SB), RODATA|NOPTR, $32

// q0: 0.2820644974708557 ×8
DATA q0<>+0(SB)/8, $0x3e906ac23e906ac2
DATA q0<>+8(SB)/8, $0x3e906ac23e906ac2
DATA q0<>+16(SB)/8, $0x3e906ac23e906ac2
DATA q0<>+24(SB)/8, $0x3e906ac23e906ac2
GLOBL q0<>(SB), RODATA|NOPTR, $32

// q1: 0.2828570306301117 ×8
DATA q1<>+0(SB)/8, $0x3e90d2a33e90d2a3
DATA q1<>+8(SB)/8, $0x3e90d2a33e90d2a3
DATA q1<>+16(SB)/8, $0x3e90d2a33e90d2a3
DATA q1<>+24(SB)/8, $0x3e90d2a33e90d2a3
GLOBL q1<>(SB), RODATA|NOPTR, $32

// q2: 0.23864488303661346 ×8
DATA q2<>+0(SB)/8, $0x3e745f533e745f53
DATA q2<>+8(SB)/8, $0x3e745f533e745f53
DATA q2<>+16(SB)/8, $0x3e745f533e745f53
DATA q2<>+24(SB)/8, $0x3e745f533e745f53
GLOBL q2<>(SB), RODATA|NOPTR, $32

// q3: 0.2255416363477707 ×8
DATA q3<>+0(SB)/8, $0x3e66f4633e66f463
DATA q3<>+8(SB)/8, $0x3e66f4633e66f463
DATA q3<>+16(SB)/8, $0x3e66f4633e66f463
DATA q3<>+24(SB)/8, $0x3e66f4633e66f463
GLOBL q3<>(SB), RODATA|NOPTR, $32

// q4: -0.09831701219081879 ×8
DATA q4<>+0(SB)/8, $0xbdc95a6ebdc95a6e
DATA q4<>+8(SB)/8, $0xbdc95a6ebdc95a6e
DATA q4<>+16(SB)/8, $0xbdc95a6ebdc95a6e
DATA q4<>+24(SB)/8, $0xbdc95a6ebdc95a6e
GLOBL q4<>(SB), RODATA|NOPTR, $32

// q5: 0.4212731719017029 ×8
DATA q5<>+0(SB)/8, $0x3ed7b11e3ed7b11e
DATA q5<>+8(SB)/8, $0x3ed7b11e3ed7b11e
DATA q5<>+16(SB)/8, $0x3ed7b11e3ed7b11e
DATA q5<>+24(SB)/8, $0x3ed7b11e3ed7b11e
GLOBL q5<>(SB), RODATA|NOPTR, $32

// q6: -0.6700212359428406 ×8
DATA q6<>+0(SB)/8, $0xbf2b8683bf2b8683
DATA q6<>+8(SB)/8, $0xbf2b8683bf2b8683
DATA q6<>+16(SB)/8, $0xbf2b8683bf2b8683
DATA q6<>+24(SB)/8, $0xbf2b8683bf2b8683
GLOBL q6<>(SB), RODATA|NOPTR, $32

// q7: 0.42892757058143616 ×8
DATA q7<>+0(SB)/8, $0x3edb9c653edb9c65
DATA q7<>+8(SB)/8, $0x3edb9c653edb9c65
DATA q7<>+16(SB)/8, $0x3edb9c653edb9c65
DATA q7<>+24(SB)/8, $0x3edb9c653edb9c65
GLOBL q7<>(SB), RODATA|NOPTR, $32

// q8: -0.12325438112020493 ×8
DATA q8<>+0(SB)/8, $0xbdfc6ccbbdfc6ccb
DATA q8<>+8(SB)/8, $0xbdfc6ccbbdfc6ccb
DATA q8<>+16(SB)/8, $0xbdfc6ccbbdfc6ccb
DATA q8<>+24(SB)/8, $0xbdfc6ccbbdfc6ccb
GLOBL q8<>(SB), RODATA|NOPTR, $32

// q9: 0.012283828109502792 ×8
DATA q9<>+0(SB)/8, $0x3c49421c3c49421c
DATA q9<>+8(SB)/8, $0x3c49421c3c49421c
DATA q9<>+16(SB)/8, $0x3c49421c3c49421c
DATA q9<>+24(SB)/8, $0x3c49421c3c49421c
GLOBL q9<>(SB), RODATA|NOPTR, $32
// EXPY sets X = e^X (8 lanes), the algorithm of expParts with b = 0.
// N, R, P are scratch.
#define EXPY(X, N, R, P) \
	VMOVUPS explo<>(SB), N; \
	VMAXPS  X, N, X; \
	VMOVUPS exphi<>(SB), N; \
	VMINPS  X, N, X; \
	VMULPS  log2e<>(SB), X, N; \
	VROUNDPS $0, N, N; \
	VFNMADD231PS ln2hi<>(SB), N, X; \
	VFNMADD231PS ln2lo<>(SB), N, X; \
	EXPTAIL(X, N, R, P)

// EXPRED2 is EXPY's range reduction on two vectors at once (x in xa and
// xb, n out in na and nb), interleaved as EXPY2 is.
#define EXPRED2(xa, na, xb, nb) \
	VMOVUPS explo<>(SB), na; \
	VMOVUPS explo<>(SB), nb; \
	VMAXPS xa, na, xa; \
	VMAXPS xb, nb, xb; \
	VMOVUPS exphi<>(SB), na; \
	VMOVUPS exphi<>(SB), nb; \
	VMINPS xa, na, xa; \
	VMINPS xb, nb, xb; \
	VMULPS log2e<>(SB), xa, na; \
	VMULPS log2e<>(SB), xb, nb; \
	VROUNDPS $0, na, na; \
	VROUNDPS $0, nb, nb; \
	VFNMADD231PS ln2hi<>(SB), na, xa; \
	VFNMADD231PS ln2hi<>(SB), nb, xb; \
	VFNMADD231PS ln2lo<>(SB), na, xa; \
	VFNMADD231PS ln2lo<>(SB), nb, xb

// EXPTAIL2 is EXPTAIL on two vectors at once (r in xa and xb, n in na and
// nb), interleaved as EXPY2 is.
#define EXPTAIL2(xa, na, ra, pa, xb, nb, rb, pb) \
	VMOVUPS p0<>(SB), pa; \
	VMOVUPS p0<>(SB), pb; \
	VFMADD213PS p1<>(SB), xa, pa; \
	VFMADD213PS p1<>(SB), xb, pb; \
	VFMADD213PS p2<>(SB), xa, pa; \
	VFMADD213PS p2<>(SB), xb, pb; \
	VFMADD213PS p3<>(SB), xa, pa; \
	VFMADD213PS p3<>(SB), xb, pb; \
	VFMADD213PS p4<>(SB), xa, pa; \
	VFMADD213PS p4<>(SB), xb, pb; \
	VFMADD213PS p5<>(SB), xa, pa; \
	VFMADD213PS p5<>(SB), xb, pb; \
	VMULPS xa, xa, ra; \
	VMULPS xb, xb, rb; \
	VFMADD213PS xa, ra, pa; \
	VFMADD213PS xb, rb, pb; \
	VADDPS one<>(SB), pa, pa; \
	VADDPS one<>(SB), pb, pb; \
	VCVTPS2DQ na, na; \
	VCVTPS2DQ nb, nb; \
	VPSRAD $1, na, ra; \
	VPSRAD $1, nb, rb; \
	VPSUBD ra, na, na; \
	VPSUBD rb, nb, nb; \
	VPADDD i127<>(SB), ra, ra; \
	VPADDD i127<>(SB), rb, rb; \
	VPSLLD $23, ra, ra; \
	VPSLLD $23, rb, rb; \
	VPADDD i127<>(SB), na, na; \
	VPADDD i127<>(SB), nb, nb; \
	VPSLLD $23, na, na; \
	VPSLLD $23, nb, nb; \
	VMULPS ra, pa, pa; \
	VMULPS rb, pb, pb; \
	VMULPS na, pa, xa; \
	VMULPS nb, pb, xb

// EXPY2 is EXPY on two vectors at once, xa and xb, each instruction of the
// one followed by the same on the other's registers, so that the core
// overlaps the two dependency chains; each lane's arithmetic, and so its
// bits, is EXPY's.
#define EXPY2(xa, na, ra, pa, xb, nb, rb, pb) \
	EXPRED2(xa, na, xb, nb); \
	EXPTAIL2(xa, na, ra, pa, xb, nb, rb, pb)


// EXP2Y sets A = e^(A+B) for a small low part B (expParts). B is
// clobbered; N, R, P are scratch.
#define EXP2Y(A, B, N, R, P) \
	VMOVUPS explo<>(SB), N; \
	VMAXPS  A, N, A; \
	VMOVUPS exphi<>(SB), N; \
	VMINPS  A, N, A; \
	VMULPS  log2e<>(SB), A, N; \
	VROUNDPS $0, N, N; \
	VFNMADD231PS ln2hi<>(SB), N, A; \
	VFNMADD231PS ln2lo<>(SB), N, A; \
	VADDPS  B, A, A; \
	EXPTAIL(A, N, R, P)

// EXPTAIL finishes e^(n·ln2 + r) for r in X and n in N: the polynomial,
// then the scaling by 2^n in two halves (subnormal and near-overflow
// results stay right).
#define EXPTAIL(X, N, R, P) \
	VMOVUPS p0<>(SB), P; \
	VFMADD213PS p1<>(SB), X, P; \
	VFMADD213PS p2<>(SB), X, P; \
	VFMADD213PS p3<>(SB), X, P; \
	VFMADD213PS p4<>(SB), X, P; \
	VFMADD213PS p5<>(SB), X, P; \
	VMULPS  X, X, R; \
	VFMADD213PS X, R, P; \
	VADDPS  one<>(SB), P, P; \
	VCVTPS2DQ N, N; \
	VPSRAD  $1, N, R; \
	VPSUBD  R, N, N; \
	VPADDD  i127<>(SB), R, R; \
	VPSLLD  $23, R, R; \
	VPADDD  i127<>(SB), N, N; \
	VPSLLD  $23, N, N; \
	VMULPS  R, P, P; \
	VMULPS  N, P, X

// NORMPARTS computes, for x in Y0, h = t·Q(t)/2 in Y8 and e = e^(−x²/2)
// in Y3 (see normParts). Clobbers Y1, Y2, Y4–Y7.
#define NORMPARTS \
	VANDPS  absmask<>(SB), Y0, Y1; \
	VMINPS  xmax<>(SB), Y1, Y2; \
	VMOVUPS one<>(SB), Y5; \
	VFMADD231PS tscale<>(SB), Y2, Y5; \
	VMOVUPS one<>(SB), Y2; \
	VDIVPS  Y5, Y2, Y2; \
	VMINPS  emax<>(SB), Y1, Y1; \
	VMULPS  Y1, Y1, Y3; \
	VMOVAPS Y3, Y4; \
	VFMSUB231PS Y1, Y1, Y4; \
	VMULPS  mhalf<>(SB), Y3, Y3; \
	VMULPS  mhalf<>(SB), Y4, Y4; \
	EXP2Y(Y3, Y4, Y5, Y6, Y7); \
	VMOVUPS q9<>(SB), Y8; \
	VFMADD213PS q8<>(SB), Y2, Y8; \
	VFMADD213PS q7<>(SB), Y2, Y8; \
	VFMADD213PS q6<>(SB), Y2, Y8; \
	VFMADD213PS q5<>(SB), Y2, Y8; \
	VFMADD213PS q4<>(SB), Y2, Y8; \
	VFMADD213PS q3<>(SB), Y2, Y8; \
	VFMADD213PS q2<>(SB), Y2, Y8; \
	VFMADD213PS q1<>(SB), Y2, Y8; \
	VFMADD213PS q0<>(SB), Y2, Y8; \
	VMULPS  Y2, Y8, Y8; \
	VMULPS  half<>(SB), Y8, Y8

// GELUY sets Y0 = gelu(Y0): (x·h)·e for x < 0, x·(1 − h·e) otherwise,
// 1 − h·e fused.
#define GELUY \
	NORMPARTS; \
	VMULPS  Y0, Y8, Y5; \
	VMULPS  Y3, Y5, Y5; \
	VFNMADD213PS one<>(SB), Y3, Y8; \
	VMULPS  Y0, Y8, Y7; \
	VBLENDVPS Y0, Y5, Y7, Y0

// NORMPARTS2 is NORMPARTS on two vectors at once, x in Y0 and Y9, each
// instruction of the one followed by the same on the other's registers
// (Y9–Y15, with Y1 and Y10 reused once their first values are dead): h in
// Y8 and Y10, e in Y3 and Y12. Clobbers Y1, Y2, Y4–Y7, Y11, Y13–Y15.
#define NORMPARTS2 \
	VANDPS absmask<>(SB), Y0, Y1; \
	VANDPS absmask<>(SB), Y9, Y10; \
	VMINPS xmax<>(SB), Y1, Y2; \
	VMINPS xmax<>(SB), Y10, Y11; \
	VMOVUPS one<>(SB), Y5; \
	VMOVUPS one<>(SB), Y14; \
	VFMADD231PS tscale<>(SB), Y2, Y5; \
	VFMADD231PS tscale<>(SB), Y11, Y14; \
	VMOVUPS one<>(SB), Y2; \
	VMOVUPS one<>(SB), Y11; \
	VDIVPS Y5, Y2, Y2; \
	VDIVPS Y14, Y11, Y11; \
	VMINPS emax<>(SB), Y1, Y1; \
	VMINPS emax<>(SB), Y10, Y10; \
	VMULPS Y1, Y1, Y3; \
	VMULPS Y10, Y10, Y12; \
	VMOVAPS Y3, Y4; \
	VMOVAPS Y12, Y13; \
	VFMSUB231PS Y1, Y1, Y4; \
	VFMSUB231PS Y10, Y10, Y13; \
	VMULPS mhalf<>(SB), Y3, Y3; \
	VMULPS mhalf<>(SB), Y12, Y12; \
	VMULPS mhalf<>(SB), Y4, Y4; \
	VMULPS mhalf<>(SB), Y13, Y13; \
	EXPRED2(Y3, Y5, Y12, Y14); \
	VADDPS Y4, Y3, Y3; \
	VADDPS Y13, Y12, Y12; \
	EXPTAIL2(Y3, Y5, Y6, Y7, Y12, Y14, Y15, Y1); \
	VMOVUPS q9<>(SB), Y8; \
	VMOVUPS q9<>(SB), Y10; \
	VFMADD213PS q8<>(SB), Y2, Y8; \
	VFMADD213PS q8<>(SB), Y11, Y10; \
	VFMADD213PS q7<>(SB), Y2, Y8; \
	VFMADD213PS q7<>(SB), Y11, Y10; \
	VFMADD213PS q6<>(SB), Y2, Y8; \
	VFMADD213PS q6<>(SB), Y11, Y10; \
	VFMADD213PS q5<>(SB), Y2, Y8; \
	VFMADD213PS q5<>(SB), Y11, Y10; \
	VFMADD213PS q4<>(SB), Y2, Y8; \
	VFMADD213PS q4<>(SB), Y11, Y10; \
	VFMADD213PS q3<>(SB), Y2, Y8; \
	VFMADD213PS q3<>(SB), Y11, Y10; \
	VFMADD213PS q2<>(SB), Y2, Y8; \
	VFMADD213PS q2<>(SB), Y11, Y10; \
	VFMADD213PS q1<>(SB), Y2, Y8; \
	VFMADD213PS q1<>(SB), Y11, Y10; \
	VFMADD213PS q0<>(SB), Y2, Y8; \
	VFMADD213PS q0<>(SB), Y11, Y10; \
	VMULPS Y2, Y8, Y8; \
	VMULPS Y11, Y10, Y10; \
	VMULPS half<>(SB), Y8, Y8; \
	VMULPS half<>(SB), Y10, Y10

// GELUY2 is GELUY on two vectors at once, Y0 and Y9: NORMPARTS2, then
// GELUY's last steps interleaved the same way, so that the core overlaps
// the two long dependency chains; each lane's arithmetic, and so its bits,
// is GELUY's. Clobbers Y1–Y8, Y10–Y15.
#define GELUY2 \
	NORMPARTS2; \
	VMULPS Y0, Y8, Y5; \
	VMULPS Y9, Y10, Y14; \
	VMULPS Y3, Y5, Y5; \
	VMULPS Y12, Y14, Y14; \
	VFNMADD213PS one<>(SB), Y3, Y8; \
	VFNMADD213PS one<>(SB), Y12, Y10; \
	VMULPS Y0, Y8, Y7; \
	VMULPS Y9, Y10, Y1; \
	VBLENDVPS Y0, Y5, Y7, Y0; \
	VBLENDVPS Y9, Y14, Y1, Y9

// GELUGRADY sets Y0 = dy·(Φ(x) + x·φ(x)) for x in Y0 and dy in Y9:
// e·(h + x·c) for x < 0, 1 + e·(x·c − h) otherwise.
#define GELUGRADY \
	NORMPARTS; \
	VMULPS  invsqrt2pi<>(SB), Y0, Y5; \
	VADDPS  Y8, Y5, Y6; \
	VMULPS  Y3, Y6, Y6; \
	VSUBPS  Y8, Y5, Y7; \
	VFMADD213PS one<>(SB), Y3, Y7; \
	VBLENDVPS Y0, Y6, Y7, Y7; \
	VMULPS  Y9, Y7, Y0

// GELUGRADY2 is GELUGRADY on two vectors at once, x in Y0 and Y9 and dy
// read from (DX)(AX*4) and 32(DX)(AX*4), interleaved as GELUY2 is; each
// lane's arithmetic, and so its bits, is GELUGRADY's. Clobbers Y1–Y8,
// Y10–Y15.
#define GELUGRADY2 \
	NORMPARTS2; \
	VMULPS invsqrt2pi<>(SB), Y0, Y5; \
	VMULPS invsqrt2pi<>(SB), Y9, Y14; \
	VADDPS Y8, Y5, Y6; \
	VADDPS Y10, Y14, Y15; \
	VMULPS Y3, Y6, Y6; \
	VMULPS Y12, Y15, Y15; \
	VSUBPS Y8, Y5, Y7; \
	VSUBPS Y10, Y14, Y1; \
	VFMADD213PS one<>(SB), Y3, Y7; \
	VFMADD213PS one<>(SB), Y12, Y1; \
	VBLENDVPS Y0, Y6, Y7, Y7; \
	VBLENDVPS Y9, Y15, Y1, Y1; \
	VMULPS (DX)(AX*4), Y7, Y0; \
	VMULPS 32(DX)(AX*4), Y1, Y9

// HSUM sets the low lane of X (the low half of Y) to the sum of Y's 8
// lanes. T is an XMM scratch register.
#define HSUM(Y, X, T) \
	VEXTRACTF128 $1, Y, T; \
	VADDPS  T, X, X; \
	VMOVHLPS X, X, T; \
	VADDPS  T, X, X; \
	VMOVSHDUP X, T; \
	VADDSS  T, X, X

// func expAVX2(dst, src *float32, n int)
TEXT ·expAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ CX, BX
	ANDQ $-8, BX
	XORQ AX, AX
	MOVQ CX, DX
	ANDQ $-16, DX
exp16:
	CMPQ AX, DX
	JGE  exp8
	VMOVUPS (SI)(AX*4), Y0
	VMOVUPS 32(SI)(AX*4), Y4
	EXPY2(Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7)
	VMOVUPS Y0, (DI)(AX*4)
	VMOVUPS Y4, 32(DI)(AX*4)
	ADDQ $16, AX
	JMP  exp16
exp8:
	CMPQ AX, BX
	JGE  exp1
	VMOVUPS (SI)(AX*4), Y0
	EXPY(Y0, Y1, Y2, Y3)
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ $8, AX
	JMP  exp8
exp1:
	CMPQ AX, CX
	JGE  expdone
	VMOVSS (SI)(AX*4), X0
	EXPY(Y0, Y1, Y2, Y3)
	VMOVSS X0, (DI)(AX*4)
	INCQ AX
	JMP  exp1
expdone:
	VZEROUPPER
	RET

// func geluAVX2(dst, src *float32, n int)
TEXT ·geluAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ CX, BX
	ANDQ $-8, BX
	XORQ AX, AX
	MOVQ CX, DX
	ANDQ $-16, DX
gelu16:
	CMPQ AX, DX
	JGE  gelu8
	VMOVUPS (SI)(AX*4), Y0
	VMOVUPS 32(SI)(AX*4), Y9
	GELUY2
	VMOVUPS Y0, (DI)(AX*4)
	VMOVUPS Y9, 32(DI)(AX*4)
	ADDQ $16, AX
	JMP  gelu16
gelu8:
	CMPQ AX, BX
	JGE  gelu1
	VMOVUPS (SI)(AX*4), Y0
	GELUY
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ $8, AX
	JMP  gelu8
gelu1:
	CMPQ AX, CX
	JGE  geludone
	VMOVSS (SI)(AX*4), X0
	GELUY
	VMOVSS X0, (DI)(AX*4)
	INCQ AX
	JMP  gelu1
geludone:
	VZEROUPPER
	RET

// func geluBackwardAVX2(dx, x, dy *float32, n int)
TEXT ·geluBackwardAVX2(SB), NOSPLIT, $0-32
	MOVQ dx+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ dy+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ CX, BX
	ANDQ $-8, BX
	XORQ AX, AX
	MOVQ CX, R8
	ANDQ $-16, R8
gb16:
	CMPQ AX, R8
	JGE  gb8
	VMOVUPS (SI)(AX*4), Y0
	VMOVUPS 32(SI)(AX*4), Y9
	GELUGRADY2
	VMOVUPS Y0, (DI)(AX*4)
	VMOVUPS Y9, 32(DI)(AX*4)
	ADDQ $16, AX
	JMP  gb16
gb8:
	CMPQ AX, BX
	JGE  gb1
	VMOVUPS (SI)(AX*4), Y0
	VMOVUPS (DX)(AX*4), Y9
	GELUGRADY
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ $8, AX
	JMP  gb8
gb1:
	CMPQ AX, CX
	JGE  gbdone
	VMOVSS (SI)(AX*4), X0
	VMOVSS (DX)(AX*4), X9
	GELUGRADY
	VMOVSS X0, (DI)(AX*4)
	INCQ AX
	JMP  gb1
gbdone:
	VZEROUPPER
	RET

// The reductions (see lanes.go): element i goes to lane i mod 16, lanes
// 0–7 in one register and 8–15 in another, each lane in element order;
// the last partial block is loaded under masks (the lanes past the end
// read as +0 and add nothing); then lanes j and j+8 are added and HSUM
// folds the 8 sums in reduceLanes' order.

// tailmask: 8 dwords of all ones, then 8 of zeros; the 8 dwords at
// tailmask+4·(8−k) are the mask of the first k lanes.
DATA tailmask<>+0(SB)/8, $0xffffffffffffffff
DATA tailmask<>+8(SB)/8, $0xffffffffffffffff
DATA tailmask<>+16(SB)/8, $0xffffffffffffffff
DATA tailmask<>+24(SB)/8, $0xffffffffffffffff
DATA tailmask<>+32(SB)/8, $0
DATA tailmask<>+40(SB)/8, $0
DATA tailmask<>+48(SB)/8, $0
DATA tailmask<>+56(SB)/8, $0
GLOBL tailmask<>(SB), RODATA|NOPTR, $64

// TAILMASKS sets Y14 and Y15 to the masks of the lanes 0–7 and 8–15 that
// hold the last CX−AX (1…15) elements. Clobbers R11, R12, R13.
#define TAILMASKS \
	MOVQ CX, R11; \
	SUBQ AX, R11; \
	MOVQ $8, R12; \
	SUBQ R11, R12; \
	XORQ R13, R13; \
	CMPQ R12, R13; \
	CMOVQLT R13, R12; \
	MOVQ $16, R13; \
	SUBQ R11, R13; \
	MOVQ $8, R11; \
	CMPQ R13, R11; \
	CMOVQGT R11, R13; \
	LEAQ tailmask<>(SB), R11; \
	VMOVUPS (R11)(R12*4), Y14; \
	VMOVUPS (R11)(R13*4), Y15

// func sumAVX2(x *float32, n int) float32
TEXT ·sumAVX2(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	MOVQ CX, BX
	ANDQ $-16, BX
	XORQ AX, AX
sum16:
	CMPQ AX, BX
	JGE  sumtail
	VADDPS (SI)(AX*4), Y0, Y0
	VADDPS 32(SI)(AX*4), Y1, Y1
	ADDQ $16, AX
	JMP  sum16
sumtail:
	CMPQ AX, CX
	JGE  sumred
	TAILMASKS
	VMASKMOVPS (SI)(AX*4), Y14, Y4
	VMASKMOVPS 32(SI)(AX*4), Y15, Y5
	VADDPS Y4, Y0, Y0
	VADDPS Y5, Y1, Y1
sumred:
	VADDPS Y1, Y0, Y0
	HSUM(Y0, X0, X1)
	VMOVSS X0, ret+16(FP)
	VZEROUPPER
	RET

// func dotAVX2(x, y *float32, n int) float32
TEXT ·dotAVX2(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	MOVQ CX, BX
	ANDQ $-16, BX
	XORQ AX, AX
dot16:
	CMPQ AX, BX
	JGE  dottail
	VMOVUPS (SI)(AX*4), Y4
	VMOVUPS 32(SI)(AX*4), Y5
	VFMADD231PS (DI)(AX*4), Y4, Y0
	VFMADD231PS 32(DI)(AX*4), Y5, Y1
	ADDQ $16, AX
	JMP  dot16
dottail:
	CMPQ AX, CX
	JGE  dotred
	TAILMASKS
	VMASKMOVPS (SI)(AX*4), Y14, Y4
	VMASKMOVPS 32(SI)(AX*4), Y15, Y5
	VMASKMOVPS (DI)(AX*4), Y14, Y6
	VMASKMOVPS 32(DI)(AX*4), Y15, Y7
	VFMADD231PS Y6, Y4, Y0
	VFMADD231PS Y7, Y5, Y1
dotred:
	VADDPS Y1, Y0, Y0
	HSUM(Y0, X0, X1)
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// func sumSqDevAVX2(x *float32, n int, mean float32) float32
TEXT ·sumSqDevAVX2(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VBROADCASTSS mean+16(FP), Y8
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	MOVQ CX, BX
	ANDQ $-16, BX
	XORQ AX, AX
ssd16:
	CMPQ AX, BX
	JGE  ssdtail
	VMOVUPS (SI)(AX*4), Y4
	VMOVUPS 32(SI)(AX*4), Y5
	VSUBPS Y8, Y4, Y4
	VSUBPS Y8, Y5, Y5
	VFMADD231PS Y4, Y4, Y0
	VFMADD231PS Y5, Y5, Y1
	ADDQ $16, AX
	JMP  ssd16
ssdtail:
	CMPQ AX, CX
	JGE  ssdred
	TAILMASKS
	VMASKMOVPS (SI)(AX*4), Y14, Y4
	VMASKMOVPS 32(SI)(AX*4), Y15, Y5
	VSUBPS Y8, Y4, Y4
	VSUBPS Y8, Y5, Y5
	VANDPS Y14, Y4, Y4
	VANDPS Y15, Y5, Y5
	VFMADD231PS Y4, Y4, Y0
	VFMADD231PS Y5, Y5, Y1
ssdred:
	VADDPS Y1, Y0, Y0
	HSUM(Y0, X0, X1)
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// func maxAVX2(x *float32, n int) float32
TEXT ·maxAVX2(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VMOVUPS neginf<>(SB), Y0
	VMOVUPS neginf<>(SB), Y1
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-16, BX
max16:
	CMPQ AX, BX
	JGE  max8init
	VMAXPS (SI)(AX*4), Y0, Y0
	VMAXPS 32(SI)(AX*4), Y1, Y1
	ADDQ $16, AX
	JMP  max16
max8init:
	VMAXPS Y1, Y0, Y0
	MOVQ CX, BX
	ANDQ $-8, BX
max8:
	CMPQ AX, BX
	JGE  maxred
	VMAXPS (SI)(AX*4), Y0, Y0
	ADDQ $8, AX
	JMP  max8
maxred:
	VEXTRACTF128 $1, Y0, X1
	VMAXPS X1, X0, X0
	VMOVHLPS X0, X0, X1
	VMAXPS X1, X0, X0
	VMOVSHDUP X0, X1
	VMAXSS X1, X0, X0
max1:
	CMPQ AX, CX
	JGE  maxdone
	VMAXSS (SI)(AX*4), X0, X0
	INCQ AX
	JMP  max1
maxdone:
	VMOVSS X0, ret+16(FP)
	VZEROUPPER
	RET

// func expSubSumAVX2(x *float32, n int, m float32) float32
TEXT ·expSubSumAVX2(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VBROADCASTSS m+16(FP), Y8
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	MOVQ CX, BX
	ANDQ $-16, BX
	XORQ AX, AX
ess16:
	CMPQ AX, BX
	JGE  esstail
	VMOVUPS (SI)(AX*4), Y0
	VMOVUPS 32(SI)(AX*4), Y4
	VSUBPS Y8, Y0, Y0
	VSUBPS Y8, Y4, Y4
	EXPY2(Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7)
	VMOVUPS Y0, (SI)(AX*4)
	VMOVUPS Y4, 32(SI)(AX*4)
	VADDPS Y0, Y10, Y10
	VADDPS Y4, Y11, Y11
	ADDQ $16, AX
	JMP  ess16
esstail:
	CMPQ AX, CX
	JGE  essred
	TAILMASKS
	VMASKMOVPS (SI)(AX*4), Y14, Y0
	VMASKMOVPS 32(SI)(AX*4), Y15, Y4
	VSUBPS Y8, Y0, Y0
	VSUBPS Y8, Y4, Y4
	EXPY2(Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7)
	VMASKMOVPS Y0, Y14, (SI)(AX*4)
	VMASKMOVPS Y4, Y15, 32(SI)(AX*4)
	VANDPS Y14, Y0, Y0
	VANDPS Y15, Y4, Y4
	VADDPS Y0, Y10, Y10
	VADDPS Y4, Y11, Y11
essred:
	VADDPS Y11, Y10, Y10
	HSUM(Y10, X10, X1)
	VMOVSS X10, ret+24(FP)
	VZEROUPPER
	RET

// func axpyAVX2(alpha float32, x, y *float32, n int)
TEXT ·axpyAVX2(SB), NOSPLIT, $0-32
	VBROADCASTSS alpha+0(FP), Y8
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DI
	MOVQ n+24(FP), CX
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-16, BX
axpy16:
	CMPQ AX, BX
	JGE  axpy8init
	VMOVUPS (DI)(AX*4), Y0
	VMOVUPS 32(DI)(AX*4), Y1
	VFMADD231PS (SI)(AX*4), Y8, Y0
	VFMADD231PS 32(SI)(AX*4), Y8, Y1
	VMOVUPS Y0, (DI)(AX*4)
	VMOVUPS Y1, 32(DI)(AX*4)
	ADDQ $16, AX
	JMP  axpy16
axpy8init:
	MOVQ CX, BX
	ANDQ $-8, BX
axpy8:
	CMPQ AX, BX
	JGE  axpy1
	VMOVUPS (DI)(AX*4), Y0
	VFMADD231PS (SI)(AX*4), Y8, Y0
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ $8, AX
	JMP  axpy8
axpy1:
	CMPQ AX, CX
	JGE  axpydone
	VMOVSS (DI)(AX*4), X0
	VFMADD231SS (SI)(AX*4), X8, X0
	VMOVSS X0, (DI)(AX*4)
	INCQ AX
	JMP  axpy1
axpydone:
	VZEROUPPER
	RET

// func scaleAVX2(alpha float32, x *float32, n int)
TEXT ·scaleAVX2(SB), NOSPLIT, $0-24
	VBROADCASTSS alpha+0(FP), Y8
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-8, BX
scale8:
	CMPQ AX, BX
	JGE  scale1
	VMULPS (SI)(AX*4), Y8, Y0
	VMOVUPS Y0, (SI)(AX*4)
	ADDQ $8, AX
	JMP  scale8
scale1:
	CMPQ AX, CX
	JGE  scaledone
	VMULSS (SI)(AX*4), X8, X0
	VMOVSS X0, (SI)(AX*4)
	INCQ AX
	JMP  scale1
scaledone:
	VZEROUPPER
	RET

// func addAVX2(dst, src *float32, n int)
TEXT ·addAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-16, BX
add16:
	CMPQ AX, BX
	JGE  add8init
	VMOVUPS (DI)(AX*4), Y0
	VMOVUPS 32(DI)(AX*4), Y1
	VADDPS (SI)(AX*4), Y0, Y0
	VADDPS 32(SI)(AX*4), Y1, Y1
	VMOVUPS Y0, (DI)(AX*4)
	VMOVUPS Y1, 32(DI)(AX*4)
	ADDQ $16, AX
	JMP  add16
add8init:
	MOVQ CX, BX
	ANDQ $-8, BX
add8:
	CMPQ AX, BX
	JGE  add1
	VMOVUPS (DI)(AX*4), Y0
	VADDPS (SI)(AX*4), Y0, Y0
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ $8, AX
	JMP  add8
add1:
	CMPQ AX, CX
	JGE  adddone
	VMOVSS (DI)(AX*4), X0
	VADDSS (SI)(AX*4), X0, X0
	VMOVSS X0, (DI)(AX*4)
	INCQ AX
	JMP  add1
adddone:
	VZEROUPPER
	RET

// func softmaxBackwardAVX2(dx, y, dy *float32, n int, s float32)
TEXT ·softmaxBackwardAVX2(SB), NOSPLIT, $0-36
	MOVQ dx+0(FP), DI
	MOVQ y+8(FP), SI
	MOVQ dy+16(FP), DX
	MOVQ n+24(FP), CX
	VBROADCASTSS s+32(FP), Y8
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-8, BX
smb8:
	CMPQ AX, BX
	JGE  smb1
	VMOVUPS (DX)(AX*4), Y0
	VSUBPS Y8, Y0, Y0
	VMULPS (SI)(AX*4), Y0, Y0
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ $8, AX
	JMP  smb8
smb1:
	CMPQ AX, CX
	JGE  smbdone
	VMOVSS (DX)(AX*4), X0
	VSUBSS X8, X0, X0
	VMULSS (SI)(AX*4), X0, X0
	VMOVSS X0, (DI)(AX*4)
	INCQ AX
	JMP  smb1
smbdone:
	VZEROUPPER
	RET

// func lnForwardAVX2(y, x, w, b *float32, n int, mean, rstd float32)
TEXT ·lnForwardAVX2(SB), NOSPLIT, $0-48
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ w+16(FP), DX
	MOVQ b+24(FP), R8
	MOVQ n+32(FP), CX
	VBROADCASTSS mean+40(FP), Y8
	VBROADCASTSS rstd+44(FP), Y9
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-8, BX
lnf8:
	CMPQ AX, BX
	JGE  lnf1
	VMOVUPS (SI)(AX*4), Y0
	VSUBPS Y8, Y0, Y0
	VMULPS Y9, Y0, Y0
	VMOVUPS (R8)(AX*4), Y1
	VFMADD231PS (DX)(AX*4), Y0, Y1
	VMOVUPS Y1, (DI)(AX*4)
	ADDQ $8, AX
	JMP  lnf8
lnf1:
	CMPQ AX, CX
	JGE  lnfdone
	VMOVSS (SI)(AX*4), X0
	VSUBSS X8, X0, X0
	VMULSS X9, X0, X0
	VMOVSS (R8)(AX*4), X1
	VFMADD231SS (DX)(AX*4), X0, X1
	VMOVSS X1, (DI)(AX*4)
	INCQ AX
	JMP  lnf1
lnfdone:
	VZEROUPPER
	RET

// LNBSLANE does 8 elements at byte offset OFF of lnBackwardSumsAVX2:
// x̂ = (x−mean)·rstd, g = dy·w, S1 += g, S2 += x̂·g (fused),
// dw += x̂·dy (fused), db += dy.
#define LNBSLANE(OFF, S1, S2) \
	VMOVUPS OFF(SI)(AX*4), Y0; \
	VSUBPS  Y8, Y0, Y0; \
	VMULPS  Y9, Y0, Y0; \
	VMOVUPS OFF(DX)(AX*4), Y1; \
	VMULPS  OFF(R8)(AX*4), Y1, Y2; \
	VADDPS  Y2, S1, S1; \
	VFMADD231PS Y2, Y0, S2; \
	VMOVUPS OFF(R9)(AX*4), Y3; \
	VFMADD231PS Y1, Y0, Y3; \
	VMOVUPS Y3, OFF(R9)(AX*4); \
	VADDPS  OFF(R10)(AX*4), Y1, Y4; \
	VMOVUPS Y4, OFF(R10)(AX*4)

// LNBSMASKED is LNBSLANE on the lanes of mask M: the others load +0 (and
// add +0 to S1 and S2) and are not stored.
#define LNBSMASKED(OFF, M, S1, S2) \
	VMASKMOVPS OFF(SI)(AX*4), M, Y0; \
	VSUBPS  Y8, Y0, Y0; \
	VMULPS  Y9, Y0, Y0; \
	VMASKMOVPS OFF(DX)(AX*4), M, Y1; \
	VMASKMOVPS OFF(R8)(AX*4), M, Y2; \
	VMULPS  Y2, Y1, Y2; \
	VADDPS  Y2, S1, S1; \
	VFMADD231PS Y2, Y0, S2; \
	VMASKMOVPS OFF(R9)(AX*4), M, Y3; \
	VFMADD231PS Y1, Y0, Y3; \
	VMASKMOVPS Y3, M, OFF(R9)(AX*4); \
	VMASKMOVPS OFF(R10)(AX*4), M, Y4; \
	VADDPS  Y4, Y1, Y4; \
	VMASKMOVPS Y4, M, OFF(R10)(AX*4)

// func lnBackwardSumsAVX2(dy, x, w, dw, db *float32, n int, mean, rstd float32) (sg, sgx float32)
TEXT ·lnBackwardSumsAVX2(SB), NOSPLIT, $0-64
	MOVQ dy+0(FP), DX
	MOVQ x+8(FP), SI
	MOVQ w+16(FP), R8
	MOVQ dw+24(FP), R9
	MOVQ db+32(FP), R10
	MOVQ n+40(FP), CX
	VBROADCASTSS mean+48(FP), Y8
	VBROADCASTSS rstd+52(FP), Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	MOVQ CX, BX
	ANDQ $-16, BX
	XORQ AX, AX
lnbs16:
	CMPQ AX, BX
	JGE  lnbstail
	LNBSLANE(0, Y10, Y12)
	LNBSLANE(32, Y11, Y13)
	ADDQ $16, AX
	JMP  lnbs16
lnbstail:
	CMPQ AX, CX
	JGE  lnbsred
	TAILMASKS
	LNBSMASKED(0, Y14, Y10, Y12)
	LNBSMASKED(32, Y15, Y11, Y13)
lnbsred:
	VADDPS Y11, Y10, Y10
	HSUM(Y10, X10, X5)
	VADDPS Y13, Y12, Y12
	HSUM(Y12, X12, X5)
	VMOVSS X10, sg+56(FP)
	VMOVSS X12, sgx+60(FP)
	VZEROUPPER
	RET

// func lnBackwardDxAVX2(dx, dy, x, w *float32, n int, mean, rstd, c1, c2 float32)
TEXT ·lnBackwardDxAVX2(SB), NOSPLIT, $0-56
	MOVQ dx+0(FP), DI
	MOVQ dy+8(FP), DX
	MOVQ x+16(FP), SI
	MOVQ w+24(FP), R8
	MOVQ n+32(FP), CX
	VBROADCASTSS mean+40(FP), Y8
	VBROADCASTSS rstd+44(FP), Y9
	VBROADCASTSS c1+48(FP), Y10
	VBROADCASTSS c2+52(FP), Y11
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-8, BX
lnbd8:
	CMPQ AX, BX
	JGE  lnbd1
	VMOVUPS (SI)(AX*4), Y0
	VSUBPS Y8, Y0, Y0
	VMULPS Y9, Y0, Y0
	VMOVUPS (DX)(AX*4), Y1
	VMULPS (R8)(AX*4), Y1, Y1
	VSUBPS Y10, Y1, Y1
	VFNMADD231PS Y11, Y0, Y1
	VMULPS Y9, Y1, Y1
	VMOVUPS Y1, (DI)(AX*4)
	ADDQ $8, AX
	JMP  lnbd8
lnbd1:
	CMPQ AX, CX
	JGE  lnbddone
	VMOVSS (SI)(AX*4), X0
	VSUBSS X8, X0, X0
	VMULSS X9, X0, X0
	VMOVSS (DX)(AX*4), X1
	VMULSS (R8)(AX*4), X1, X1
	VSUBSS X10, X1, X1
	VFNMADD231SS X11, X0, X1
	VMULSS X9, X1, X1
	VMOVSS X1, (DI)(AX*4)
	INCQ AX
	JMP  lnbd1
lnbddone:
	VZEROUPPER
	RET

// hq0: q0/2
DATA hq0<>+0(SB)/4, $0x3e106ac2
GLOBL hq0<>(SB), RODATA|NOPTR, $4

// hq1: q1/2
DATA hq1<>+0(SB)/4, $0x3e10d2a3
GLOBL hq1<>(SB), RODATA|NOPTR, $4

// hq2: q2/2
DATA hq2<>+0(SB)/4, $0x3df45f53
GLOBL hq2<>(SB), RODATA|NOPTR, $4

// hq3: q3/2
DATA hq3<>+0(SB)/4, $0x3de6f463
GLOBL hq3<>(SB), RODATA|NOPTR, $4

// hq4: q4/2
DATA hq4<>+0(SB)/4, $0xbd495a6e
GLOBL hq4<>(SB), RODATA|NOPTR, $4

// hq5: q5/2
DATA hq5<>+0(SB)/4, $0x3e57b11e
GLOBL hq5<>(SB), RODATA|NOPTR, $4

// hq6: q6/2
DATA hq6<>+0(SB)/4, $0xbeab8683
GLOBL hq6<>(SB), RODATA|NOPTR, $4

// hq7: q7/2
DATA hq7<>+0(SB)/4, $0x3e5b9c65
GLOBL hq7<>(SB), RODATA|NOPTR, $4

// hq8: q8/2
DATA hq8<>+0(SB)/4, $0xbd7c6ccb
GLOBL hq8<>(SB), RODATA|NOPTR, $4

// hq9: q9/2
DATA hq9<>+0(SB)/4, $0x3bc9421c
GLOBL hq9<>(SB), RODATA|NOPTR, $4

// ---- AVX-512 versions (16 lanes; the last n mod 16 under a k mask) ----
// Constants are read with embedded broadcasts from the tables above.

// EXPZTAIL finishes e^(n·ln2 + r) for r in X and n in N; VSCALEFPS applies
// 2^n with correct subnormal and overflow results.
#define EXPZTAIL(X, N, R, P) \
	VBROADCASTSS p0<>(SB), P; \
	VFMADD213PS.BCST p1<>(SB), X, P; \
	VFMADD213PS.BCST p2<>(SB), X, P; \
	VFMADD213PS.BCST p3<>(SB), X, P; \
	VFMADD213PS.BCST p4<>(SB), X, P; \
	VFMADD213PS.BCST p5<>(SB), X, P; \
	VMULPS X, X, R; \
	VFMADD213PS X, R, P; \
	VADDPS.BCST one<>(SB), P, P; \
	VSCALEFPS N, P, X

// EXPZ sets X = e^X; the clamps keep NaN (X is the second source).
#define EXPZ(X, N, R, P) \
	VBROADCASTSS explo<>(SB), N; \
	VMAXPS X, N, X; \
	VBROADCASTSS exphi<>(SB), N; \
	VMINPS X, N, X; \
	VMULPS.BCST log2e<>(SB), X, N; \
	VRNDSCALEPS $0, N, N; \
	VFNMADD231PS.BCST ln2hi<>(SB), N, X; \
	VFNMADD231PS.BCST ln2lo<>(SB), N, X; \
	EXPZTAIL(X, N, R, P)

// NORMPARTSZ: for x in Z0, h = t·Q(t)/2 in Z8, e = e^(−x²/2) in Z3 and
// the sign of x in K1. Clobbers Z1, Z2, Z4–Z7. The exponent lies in
// [−112.5, 0] and VSCALEFPS takes any n, so no clamps are needed.
#define NORMPARTSZ \
	VPANDD.BCST absmask<>(SB), Z0, Z1; \
	VMINPS.BCST xmax<>(SB), Z1, Z2; \
	VBROADCASTSS one<>(SB), Z5; \
	VFMADD231PS.BCST tscale<>(SB), Z2, Z5; \
	VBROADCASTSS one<>(SB), Z2; \
	VDIVPS Z5, Z2, Z2; \
	VMINPS.BCST emax<>(SB), Z1, Z1; \
	VMULPS Z1, Z1, Z3; \
	VMOVAPS Z3, Z4; \
	VFMSUB231PS Z1, Z1, Z4; \
	VMULPS.BCST mhalf<>(SB), Z3, Z3; \
	VMULPS.BCST mhalf<>(SB), Z4, Z4; \
	VMULPS.BCST log2e<>(SB), Z3, Z5; \
	VRNDSCALEPS $0, Z5, Z5; \
	VFNMADD231PS.BCST ln2hi<>(SB), Z5, Z3; \
	VFNMADD231PS.BCST ln2lo<>(SB), Z5, Z3; \
	VADDPS Z4, Z3, Z3; \
	EXPZTAIL(Z3, Z5, Z6, Z7); \
	VBROADCASTSS hq9<>(SB), Z8; \
	VFMADD213PS.BCST hq8<>(SB), Z2, Z8; \
	VFMADD213PS.BCST hq7<>(SB), Z2, Z8; \
	VFMADD213PS.BCST hq6<>(SB), Z2, Z8; \
	VFMADD213PS.BCST hq5<>(SB), Z2, Z8; \
	VFMADD213PS.BCST hq4<>(SB), Z2, Z8; \
	VFMADD213PS.BCST hq3<>(SB), Z2, Z8; \
	VFMADD213PS.BCST hq2<>(SB), Z2, Z8; \
	VFMADD213PS.BCST hq1<>(SB), Z2, Z8; \
	VFMADD213PS.BCST hq0<>(SB), Z2, Z8; \
	VMULPS Z2, Z8, Z8; \
	VPMOVD2M Z0, K1

// GELUZ sets Z0 = gelu(Z0): (x·h)·e for x < 0, x·(1 − h·e) otherwise.
#define GELUZ \
	NORMPARTSZ; \
	VMULPS Z0, Z8, Z5; \
	VMULPS Z3, Z5, Z5; \
	VFNMADD213PS.BCST one<>(SB), Z3, Z8; \
	VMULPS Z0, Z8, Z0; \
	VMOVAPS Z5, K1, Z0

// GELUGRADZ sets Z0 = dy·(Φ(x) + x·φ(x)) for x in Z0, dy in Z9.
#define GELUGRADZ \
	NORMPARTSZ; \
	VMULPS.BCST invsqrt2pi<>(SB), Z0, Z5; \
	VADDPS Z8, Z5, Z6; \
	VMULPS Z3, Z6, Z6; \
	VSUBPS Z8, Z5, Z0; \
	VFMADD213PS.BCST one<>(SB), Z3, Z0; \
	VMOVAPS Z6, K1, Z0; \
	VMULPS Z9, Z0, Z0

// TAILMASK sets K2 to the low CX−AX bits (1 ≤ CX−AX < 16).
#define TAILMASK \
	MOVQ CX, R11; \
	SUBQ AX, R11; \
	MOVQ $1, R12; \
	SHLXQ R11, R12, R12; \
	DECQ R12; \
	KMOVW R12, K2

// func expAVX512(dst, src *float32, n int)
TEXT ·expAVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ CX, BX
	ANDQ $-16, BX
	XORQ AX, AX
zexp16:
	CMPQ AX, BX
	JGE  zexptail
	VMOVUPS (SI)(AX*4), Z0
	EXPZ(Z0, Z1, Z2, Z3)
	VMOVUPS Z0, (DI)(AX*4)
	ADDQ $16, AX
	JMP  zexp16
zexptail:
	CMPQ AX, CX
	JGE  zexpdone
	TAILMASK
	VMOVUPS.Z (SI)(AX*4), K2, Z0
	EXPZ(Z0, Z1, Z2, Z3)
	VMOVUPS Z0, K2, (DI)(AX*4)
zexpdone:
	VZEROUPPER
	RET

// func geluAVX512(dst, src *float32, n int)
TEXT ·geluAVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ CX, BX
	ANDQ $-16, BX
	XORQ AX, AX
zgelu16:
	CMPQ AX, BX
	JGE  zgelutail
	VMOVUPS (SI)(AX*4), Z0
	GELUZ
	VMOVUPS Z0, (DI)(AX*4)
	ADDQ $16, AX
	JMP  zgelu16
zgelutail:
	CMPQ AX, CX
	JGE  zgeludone
	TAILMASK
	VMOVUPS.Z (SI)(AX*4), K2, Z0
	GELUZ
	VMOVUPS Z0, K2, (DI)(AX*4)
zgeludone:
	VZEROUPPER
	RET

// func geluBackwardAVX512(dx, x, dy *float32, n int)
TEXT ·geluBackwardAVX512(SB), NOSPLIT, $0-32
	MOVQ dx+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ dy+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ CX, BX
	ANDQ $-16, BX
	XORQ AX, AX
zgb16:
	CMPQ AX, BX
	JGE  zgbtail
	VMOVUPS (SI)(AX*4), Z0
	VMOVUPS (DX)(AX*4), Z9
	GELUGRADZ
	VMOVUPS Z0, (DI)(AX*4)
	ADDQ $16, AX
	JMP  zgb16
zgbtail:
	CMPQ AX, CX
	JGE  zgbdone
	TAILMASK
	VMOVUPS.Z (SI)(AX*4), K2, Z0
	VMOVUPS.Z (DX)(AX*4), K2, Z9
	GELUGRADZ
	VMOVUPS Z0, K2, (DI)(AX*4)
zgbdone:
	VZEROUPPER
	RET

// rot16: 0…15, 0…15 (the softmax's lane rotations)
DATA rot16<>+0(SB)/8, $0x0000000100000000
DATA rot16<>+8(SB)/8, $0x0000000300000002
DATA rot16<>+16(SB)/8, $0x0000000500000004
DATA rot16<>+24(SB)/8, $0x0000000700000006
DATA rot16<>+32(SB)/8, $0x0000000900000008
DATA rot16<>+40(SB)/8, $0x0000000b0000000a
DATA rot16<>+48(SB)/8, $0x0000000d0000000c
DATA rot16<>+56(SB)/8, $0x0000000f0000000e
DATA rot16<>+64(SB)/8, $0x0000000100000000
DATA rot16<>+72(SB)/8, $0x0000000300000002
DATA rot16<>+80(SB)/8, $0x0000000500000004
DATA rot16<>+88(SB)/8, $0x0000000700000006
DATA rot16<>+96(SB)/8, $0x0000000900000008
DATA rot16<>+104(SB)/8, $0x0000000b0000000a
DATA rot16<>+112(SB)/8, $0x0000000d0000000c
DATA rot16<>+120(SB)/8, $0x0000000f0000000e
GLOBL rot16<>(SB), RODATA|NOPTR, $128

// func softmaxRowsAVX512(x *float32, rows, cols int)
// Each row in place: m = max, x = e^(x−m), s = Σx, x /= s... as x·(1/s).
// Rows go two at a time, interleaved, so that the two rows' dependency
// chains (max → reduce → exp → sum → reduce → divide) overlap. The last
// partial vector of a row (cols%16 != 0) is, when cols ≥ 16, the row's last
// 16 elements read and written unmasked, overlapping the full vectors:
// masked stores are slow on Zen 4 (a 50-wide row took 2.5× a 48-wide one).
TEXT ·softmaxRowsAVX512(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ rows+8(FP), R8
	MOVQ cols+16(FP), CX
	MOVQ CX, BX
	ANDQ $-16, BX
	// K2: mask of the last partial vector (all ones if cols%16 == 0: unused).
	MOVQ CX, R11
	ANDQ $15, R11
	MOVQ $1, R12
	SHLXQ R11, R12, R12
	DECQ R12
	KMOVW R12, K2
	// Overlap mode (R14 = 1) when cols ≥ 16 and cols%16 != 0: R13 is the byte
	// offset of the last 16 elements, R9 = 16 − cols%16 the first of their
	// lanes that lies past the full vectors.
	XORQ R14, R14
	TESTQ R11, R11
	JZ   zsmstart
	CMPQ CX, $16
	JLT  zsmstart
	MOVQ $1, R14
	LEAQ -64(CX*4), R13
	MOVQ $16, R9
	SUBQ R11, R9
	// Z18: the lane rotation that moves the overlapping vector's top
	// cols%16 lanes (the row's last elements) down to lanes 0…cols%16−1,
	// where the row's lane order puts them: lane j takes lane j+16−cols%16.
	LEAQ rot16<>(SB), DX
	VMOVDQU32 (DX)(R9*4), Z18
zsmstart:
zsm2row:
	CMPQ R8, $2
	JLT  zsm1row
	LEAQ (SI)(CX*4), DI
	VBROADCASTSS neginf<>(SB), Z10
	VMOVAPS Z10, Z13
	XORQ AX, AX
zsm2max:
	CMPQ AX, BX
	JGE  zsm2maxtail
	VMAXPS (SI)(AX*4), Z10, Z10
	VMAXPS (DI)(AX*4), Z13, Z13
	ADDQ $16, AX
	JMP  zsm2max
zsm2maxtail:
	CMPQ AX, CX
	JGE  zsm2maxred
	TESTQ R14, R14
	JNZ  zsm2maxov
	VMAXPS (SI)(AX*4), Z10, K2, Z10
	VMAXPS (DI)(AX*4), Z13, K2, Z13
	JMP  zsm2maxred
zsm2maxov: // the last 16, overlapping the full vectors: max does not mind
	VMAXPS (SI)(R13*1), Z10, Z10
	VMAXPS (DI)(R13*1), Z13, Z13
zsm2maxred:
	VEXTRACTF32X8 $1, Z10, Y9
	VEXTRACTF32X8 $1, Z13, Y8
	VMAXPS Y9, Y10, Y10
	VMAXPS Y8, Y13, Y13
	VEXTRACTF128 $1, Y10, X9
	VEXTRACTF128 $1, Y13, X8
	VMAXPS X9, X10, X10
	VMAXPS X8, X13, X13
	VMOVHLPS X10, X10, X9
	VMOVHLPS X13, X13, X8
	VMAXPS X9, X10, X10
	VMAXPS X8, X13, X13
	VMOVSHDUP X10, X9
	VMOVSHDUP X13, X8
	VMAXSS X9, X10, X10
	VMAXSS X8, X13, X13
	VBROADCASTSS X10, Z10
	VBROADCASTSS X13, Z13
	VPXORD Z11, Z11, Z11
	VPXORD Z14, Z14, Z14
	TESTQ R14, R14
	JZ   zsm2exp0
	// Overlap mode: e^(x−m) of the last 16 from the original values, kept
	// in Z16/Z17 and stored after the loop; its lanes past the full vectors
	// enter the sum after the loop, rotated into lanes 0…cols%16−1.
	VMOVUPS (SI)(R13*1), Z16
	VMOVUPS (DI)(R13*1), Z17
	VSUBPS Z10, Z16, Z16
	VSUBPS Z13, Z17, Z17
	EXPZ(Z16, Z1, Z2, Z3)
	EXPZ(Z17, Z5, Z6, Z7)
zsm2exp0:
	XORQ AX, AX
zsm2exp:
	CMPQ AX, BX
	JGE  zsm2exptail
	VMOVUPS (SI)(AX*4), Z0
	VMOVUPS (DI)(AX*4), Z4
	VSUBPS Z10, Z0, Z0
	VSUBPS Z13, Z4, Z4
	EXPZ(Z0, Z1, Z2, Z3)
	EXPZ(Z4, Z5, Z6, Z7)
	VMOVUPS Z0, (SI)(AX*4)
	VMOVUPS Z4, (DI)(AX*4)
	VADDPS Z0, Z11, Z11
	VADDPS Z4, Z14, Z14
	ADDQ $16, AX
	JMP  zsm2exp
zsm2exptail:
	CMPQ AX, CX
	JGE  zsm2sum
	TESTQ R14, R14
	JNZ  zsm2expov
	VMOVUPS.Z (SI)(AX*4), K2, Z0
	VMOVUPS.Z (DI)(AX*4), K2, Z4
	VSUBPS Z10, Z0, Z0
	VSUBPS Z13, Z4, Z4
	EXPZ(Z0, Z1, Z2, Z3)
	EXPZ(Z4, Z5, Z6, Z7)
	VMOVUPS Z0, K2, (SI)(AX*4)
	VMOVUPS Z4, K2, (DI)(AX*4)
	VADDPS Z0, Z11, K2, Z11
	VADDPS Z4, Z14, K2, Z14
	JMP  zsm2sum
zsm2expov: // overlapping lanes get the values the loop wrote: same inputs, same ops
	VPERMPS Z16, Z18, Z19
	VADDPS Z19, Z11, K2, Z11
	VPERMPS Z17, Z18, Z19
	VADDPS Z19, Z14, K2, Z14
	VMOVUPS Z16, (SI)(R13*1)
	VMOVUPS Z17, (DI)(R13*1)
zsm2sum:
	VEXTRACTF32X8 $1, Z11, Y9
	VEXTRACTF32X8 $1, Z14, Y8
	VADDPS Y9, Y11, Y11
	VADDPS Y8, Y14, Y14
	HSUM(Y11, X11, X9)
	HSUM(Y14, X14, X8)
	VBROADCASTSS one<>(SB), X12
	VBROADCASTSS one<>(SB), X15
	VDIVSS X11, X12, X12
	VDIVSS X14, X15, X15
	VBROADCASTSS X12, Z12
	VBROADCASTSS X15, Z15
	TESTQ R14, R14
	JZ   zsm2scale0
	// Overlap mode: scale the last 16 before the loop rescales its overlap.
	VMULPS (SI)(R13*1), Z12, Z16
	VMULPS (DI)(R13*1), Z15, Z17
zsm2scale0:
	XORQ AX, AX
zsm2scale:
	CMPQ AX, BX
	JGE  zsm2scaletail
	VMULPS (SI)(AX*4), Z12, Z0
	VMULPS (DI)(AX*4), Z15, Z4
	VMOVUPS Z0, (SI)(AX*4)
	VMOVUPS Z4, (DI)(AX*4)
	ADDQ $16, AX
	JMP  zsm2scale
zsm2scaletail:
	CMPQ AX, CX
	JGE  zsm2next
	TESTQ R14, R14
	JNZ  zsm2scaleov
	VMULPS.Z (SI)(AX*4), Z12, K2, Z0
	VMULPS.Z (DI)(AX*4), Z15, K2, Z4
	VMOVUPS Z0, K2, (SI)(AX*4)
	VMOVUPS Z4, K2, (DI)(AX*4)
	JMP  zsm2next
zsm2scaleov:
	VMOVUPS Z16, (SI)(R13*1)
	VMOVUPS Z17, (DI)(R13*1)
zsm2next:
	LEAQ (DI)(CX*4), SI
	SUBQ $2, R8
	JMP  zsm2row
zsm1row:
	TESTQ R8, R8
	JZ   zsmdone
	VBROADCASTSS neginf<>(SB), Z10
	XORQ AX, AX
zsm1max:
	CMPQ AX, BX
	JGE  zsm1maxtail
	VMAXPS (SI)(AX*4), Z10, Z10
	ADDQ $16, AX
	JMP  zsm1max
zsm1maxtail:
	CMPQ AX, CX
	JGE  zsm1maxred
	TESTQ R14, R14
	JNZ  zsm1maxov
	VMAXPS (SI)(AX*4), Z10, K2, Z10
	JMP  zsm1maxred
zsm1maxov: // the last 16, overlapping the full vectors: max does not mind
	VMAXPS (SI)(R13*1), Z10, Z10
zsm1maxred:
	VEXTRACTF32X8 $1, Z10, Y9
	VMAXPS Y9, Y10, Y10
	VEXTRACTF128 $1, Y10, X9
	VMAXPS X9, X10, X10
	VMOVHLPS X10, X10, X9
	VMAXPS X9, X10, X10
	VMOVSHDUP X10, X9
	VMAXSS X9, X10, X10
	VBROADCASTSS X10, Z10
	VPXORD Z11, Z11, Z11
	TESTQ R14, R14
	JZ   zsm1exp0
	// Overlap mode: e^(x−m) of the last 16 from the original values, kept
	// in Z16/Z17 and stored after the loop; its lanes past the full vectors
	// enter the sum after the loop, rotated into lanes 0…cols%16−1.
	VMOVUPS (SI)(R13*1), Z16
	VSUBPS Z10, Z16, Z16
	EXPZ(Z16, Z1, Z2, Z3)
zsm1exp0:
	XORQ AX, AX
zsm1exp:
	CMPQ AX, BX
	JGE  zsm1exptail
	VMOVUPS (SI)(AX*4), Z0
	VSUBPS Z10, Z0, Z0
	EXPZ(Z0, Z1, Z2, Z3)
	VMOVUPS Z0, (SI)(AX*4)
	VADDPS Z0, Z11, Z11
	ADDQ $16, AX
	JMP  zsm1exp
zsm1exptail:
	CMPQ AX, CX
	JGE  zsm1sum
	TESTQ R14, R14
	JNZ  zsm1expov
	VMOVUPS.Z (SI)(AX*4), K2, Z0
	VSUBPS Z10, Z0, Z0
	EXPZ(Z0, Z1, Z2, Z3)
	VMOVUPS Z0, K2, (SI)(AX*4)
	VADDPS Z0, Z11, K2, Z11
	JMP  zsm1sum
zsm1expov: // overlapping lanes get the values the loop wrote: same inputs, same ops
	VPERMPS Z16, Z18, Z19
	VADDPS Z19, Z11, K2, Z11
	VMOVUPS Z16, (SI)(R13*1)
zsm1sum:
	VEXTRACTF32X8 $1, Z11, Y9
	VADDPS Y9, Y11, Y11
	HSUM(Y11, X11, X9)
	VBROADCASTSS one<>(SB), X12
	VDIVSS X11, X12, X12
	VBROADCASTSS X12, Z12
	TESTQ R14, R14
	JZ   zsm1scale0
	// Overlap mode: scale the last 16 before the loop rescales its overlap.
	VMULPS (SI)(R13*1), Z12, Z16
zsm1scale0:
	XORQ AX, AX
zsm1scale:
	CMPQ AX, BX
	JGE  zsm1scaletail
	VMULPS (SI)(AX*4), Z12, Z0
	VMOVUPS Z0, (SI)(AX*4)
	ADDQ $16, AX
	JMP  zsm1scale
zsm1scaletail:
	CMPQ AX, CX
	JGE  zsm1next
	TESTQ R14, R14
	JNZ  zsm1scaleov
	VMULPS.Z (SI)(AX*4), Z12, K2, Z0
	VMOVUPS Z0, K2, (SI)(AX*4)
	JMP  zsm1next
zsm1scaleov:
	VMOVUPS Z16, (SI)(R13*1)
zsm1next:
zsmdone:
	VZEROUPPER
	RET

// func biasGELUAVX2(y, b *float32, n int)
// y = GELU(y + b): addAVX2's sum, then geluAVX2's arithmetic on it in
// registers, so the same bits as the two passes, in one.
TEXT ·biasGELUAVX2(SB), NOSPLIT, $0-24
	MOVQ y+0(FP), DI
	MOVQ b+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ CX, BX
	ANDQ $-8, BX
	XORQ AX, AX
	MOVQ CX, DX
	ANDQ $-16, DX
bg16:
	CMPQ AX, DX
	JGE  bg8
	VMOVUPS (DI)(AX*4), Y0
	VMOVUPS 32(DI)(AX*4), Y9
	VADDPS (SI)(AX*4), Y0, Y0
	VADDPS 32(SI)(AX*4), Y9, Y9
	GELUY2
	VMOVUPS Y0, (DI)(AX*4)
	VMOVUPS Y9, 32(DI)(AX*4)
	ADDQ $16, AX
	JMP  bg16
bg8:
	CMPQ AX, BX
	JGE  bg1
	VMOVUPS (DI)(AX*4), Y0
	VADDPS (SI)(AX*4), Y0, Y0
	GELUY
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ $8, AX
	JMP  bg8
bg1:
	CMPQ AX, CX
	JGE  bgdone
	VMOVSS (DI)(AX*4), X0
	VADDSS (SI)(AX*4), X0, X0
	GELUY
	VMOVSS X0, (DI)(AX*4)
	INCQ AX
	JMP  bg1
bgdone:
	VZEROUPPER
	RET

// func biasResidualAVX2(y, b, r *float32, n int)
// y = r + (y + b): addAVX2's sum, then the residual's (axpyAVX2 with alpha
// 1: one rounding of r + s, as VADDPS), in one pass.
TEXT ·biasResidualAVX2(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	MOVQ b+8(FP), SI
	MOVQ r+16(FP), R8
	MOVQ n+24(FP), CX
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-16, BX
br16:
	CMPQ AX, BX
	JGE  br8init
	VMOVUPS (DI)(AX*4), Y0
	VMOVUPS 32(DI)(AX*4), Y1
	VADDPS (SI)(AX*4), Y0, Y0
	VADDPS 32(SI)(AX*4), Y1, Y1
	VADDPS (R8)(AX*4), Y0, Y0
	VADDPS 32(R8)(AX*4), Y1, Y1
	VMOVUPS Y0, (DI)(AX*4)
	VMOVUPS Y1, 32(DI)(AX*4)
	ADDQ $16, AX
	JMP  br16
br8init:
	MOVQ CX, BX
	ANDQ $-8, BX
br8:
	CMPQ AX, BX
	JGE  br1
	VMOVUPS (DI)(AX*4), Y0
	VADDPS (SI)(AX*4), Y0, Y0
	VADDPS (R8)(AX*4), Y0, Y0
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ $8, AX
	JMP  br8
br1:
	CMPQ AX, CX
	JGE  brdone
	VMOVSS (DI)(AX*4), X0
	VADDSS (SI)(AX*4), X0, X0
	VADDSS (R8)(AX*4), X0, X0
	VMOVSS X0, (DI)(AX*4)
	INCQ AX
	JMP  br1
brdone:
	VZEROUPPER
	RET
