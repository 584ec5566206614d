// amx_probe compares AMX's TDPBF16PS with models of its arithmetic, on
// random bfloat16 tiles: 16×16 float32 C, A 16 rows × KP pairs, B KP pair
// rows × 16 columns, C += A·B by one TDPBF16PS.
//
//	gcc -O2 -mamx-tile -mamx-bf16 -mavx512f amx_probe.c -o /tmp/amx_probe -lm
//	/tmp/amx_probe 16      # KP pairs per tile, 1..16
//
// Models (each FMA and add in float32, round to nearest even):
//   - sdm: Intel's pseudo-code: an even-element chain e and an odd-element
//     chain o, both from zero over the tile's pairs, then C + (e + o);
//   - vdpbf16ps: VDPBF16PS's chain on C, pair by pair, odd element first.
// It needs Linux ≥ 5.16 (arch_prctl ARCH_REQ_XCOMP_PERM) and a CPU with AMX.
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef struct {
	uint8_t palette, start, res[14];
	uint16_t colsb[16];
	uint8_t rows[16];
} tilecfg;

static float widen(uint16_t h) {
	uint32_t u = (uint32_t)h << 16;
	float x;
	memcpy(&x, &u, 4);
	return x;
}

static uint16_t round_bf16(float x) { // to nearest even, subnormals to zero
	uint32_t u;
	memcpy(&u, &x, 4);
	if ((u & 0x7f800000) == 0) return (u >> 16) & 0x8000;
	return (u + 0x7fff + ((u >> 16) & 1)) >> 16;
}

static float rnd(void) { return (float)((rand() / (double)RAND_MAX - 0.5) * ldexp(1, rand() % 60 - 30)); }

int main(int argc, char **argv) {
	int kp = argc > 1 ? atoi(argv[1]) : 16;
	if (kp < 1 || kp > 16) return 2;
	if (syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XTILEDATA */)) {
		perror("arch_prctl");
		return 1;
	}
	tilecfg cfg = {.palette = 1};
	cfg.colsb[0] = 64, cfg.rows[0] = 16;     // C
	cfg.colsb[1] = 4 * kp, cfg.rows[1] = 16; // A
	cfg.colsb[2] = 64, cfg.rows[2] = kp;     // B
	_tile_loadconfig(&cfg);
	static uint16_t A[16][32], B[16][32];
	static float C[16][16], C0[16][16];
	long n = 0, bad_sdm = 0, bad_vdp = 0;
	srand(1);
	for (int t = 0; t < 200; t++) {
		for (int i = 0; i < 16; i++)
			for (int j = 0; j < 32; j++) A[i][j] = round_bf16(rnd()), B[i][j] = round_bf16(rnd());
		for (int i = 0; i < 16; i++)
			for (int j = 0; j < 16; j++) C0[i][j] = C[i][j] = rnd();
		_tile_loadd(0, C, 64);
		_tile_loadd(1, A, 64);
		_tile_loadd(2, B, 64);
		_tile_dpbf16ps(0, 1, 2);
		_tile_stored(0, C, 64);
		for (int m = 0; m < 16; m++)
			for (int j = 0; j < 16; j++) {
				float e = 0, o = 0, v = C0[m][j];
				for (int k = 0; k < kp; k++) {
					e = fmaf(widen(A[m][2 * k]), widen(B[k][2 * j]), e);
					o = fmaf(widen(A[m][2 * k + 1]), widen(B[k][2 * j + 1]), o);
					v = fmaf(widen(A[m][2 * k + 1]), widen(B[k][2 * j + 1]), v);
					v = fmaf(widen(A[m][2 * k]), widen(B[k][2 * j]), v);
				}
				float sdm = C0[m][j] + (e + o);
				n++;
				bad_sdm += sdm != C[m][j];
				bad_vdp += v != C[m][j];
			}
	}
	_tile_release();
	printf("KP=%d: %ld elements; sdm model differs on %ld, vdpbf16ps model on %ld\n", kp, n, bad_sdm, bad_vdp);
	return 0;
}
