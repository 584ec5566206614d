package cfgerr

import (
	"math"
	"testing"
)

// TestPositiveNormal32: which float64 values stay positive, normal and
// finite once rounded to float32.
func TestPositiveNormal32(t *testing.T) {
	for _, tc := range []struct {
		x    float64
		want bool
	}{
		{1, true}, {1e-8, true}, {0x1p-126, true}, {math.MaxFloat32, true},
		{0, false}, {-1, false}, {1e-40, false}, {1e-300, false}, {1e39, false},
		{math.NaN(), false}, {math.Inf(1), false}, {math.SmallestNonzeroFloat32, false},
	} {
		if got := PositiveNormal32(tc.x); got != tc.want {
			t.Errorf("PositiveNormal32(%v) = %t, want %t", tc.x, got, tc.want)
		}
	}
}
