package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestPackLayouts checks the panel packs (the AVX2 assembly where this CPU
// has it, Go for the rest) against their definitions, element by element,
// for whole and partial panels and blocks, with a source stride wider than
// the block and the destination pre-filled with garbage.
func TestPackLayouts(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, tc := range []struct{ n, kc, w, ld int }{
		{96, 40, 16, 100}, {35, 9, 16, 37}, {16, 1, 16, 16}, {120, 485, 6, 1536}, {13, 7, 6, 20}, {5, 3, 6, 5}, {33, 17, 8, 50},
	} {
		t.Run(fmt.Sprintf("panels_n%d_kc%d_w%d", tc.n, tc.kc, tc.w), func(t *testing.T) {
			const c0, p0 = 3, 2
			src := randSlice(r, (p0+tc.kc)*tc.ld+c0+tc.n)
			panels := (tc.n + tc.w - 1) / tc.w
			dst := randSlice(r, panels*tc.kc*tc.w)
			packPanels(dst, src, tc.ld, c0, tc.n, p0, tc.kc, tc.w)
			for c := 0; c < panels; c++ {
				for p := 0; p < tc.kc; p++ {
					for j := 0; j < tc.w; j++ {
						var want float32
						if col := c*tc.w + j; col < tc.n {
							want = src[(p0+p)*tc.ld+c0+col]
						}
						if got := dst[c*tc.kc*tc.w+p*tc.w+j]; got != want {
							t.Fatalf("panel %d p %d j %d: %g, want %g", c, p, j, got, want)
						}
					}
				}
			}
		})
	}
	for _, tc := range []struct{ w, kc, R, ld int }{
		{16, 384, 16, 400}, {16, 13, 16, 20}, {11, 30, 16, 31}, {8, 8, 8, 8}, {6, 100, 6, 120}, {7, 5, 16, 9}, {24, 19, 32, 40},
	} {
		t.Run(fmt.Sprintf("transposed_w%d_kc%d_R%d", tc.w, tc.kc, tc.R), func(t *testing.T) {
			const r0, c0 = 2, 3
			src := randSlice(r, (r0+tc.w)*tc.ld+c0+tc.kc)
			dst := randSlice(r, tc.kc*tc.R)
			packTransposed(dst, src, tc.ld, r0, tc.w, c0, tc.kc, tc.R)
			for p := 0; p < tc.kc; p++ {
				for i := 0; i < tc.R; i++ {
					var want float32
					if i < tc.w {
						want = src[(r0+i)*tc.ld+c0+p]
					}
					if got := dst[p*tc.R+i]; got != want {
						t.Fatalf("p %d i %d: %g, want %g", p, i, got, want)
					}
				}
			}
		})
	}
}
