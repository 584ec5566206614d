package interp

import (
	"fmt"
	"math"
	"testing"
)

type tap struct {
	i int
	w float64
}

func taps[T Float](t *Taps[T]) [][]tap {
	out := make([][]tap, t.Out)
	for o := range t.Out {
		for k := t.Off[o]; k < t.Off[o+1]; k++ {
			out[o] = append(out[o], tap{t.Idx[k], float64(t.W[k])})
		}
	}
	return out
}

// TestHandComputed checks small cases worked out from PyTorch's formulas.
func TestHandComputed(t *testing.T) {
	tests := []struct {
		name string
		got  [][]tap
		want [][]tap
	}{
		// x = 2·(o+0.5) − 0.5 = 0.5, 2.5
		{"bilinear 4→2", taps(Bilinear[float64](4, 2)), [][]tap{{{0, .5}, {1, .5}}, {{2, .5}, {3, .5}}}},
		// x = 0.5·(o+0.5) − 0.5 = −0.25 → 0, 0.25, 0.75, 1.25 (right neighbour clamped to the last sample)
		{"bilinear 2→4", taps(Bilinear[float32](2, 4)), [][]tap{{{0, 1}, {1, 0}}, {{0, .75}, {1, .25}}, {{0, .25}, {1, .75}}, {{1, .75}, {1, .25}}}},
		{"nearest 2→4", taps(Nearest[float64](2, 4)), [][]tap{{{0, 1}}, {{0, 1}}, {{1, 1}}, {{1, 1}}}},
		{"nearest 3→2", taps(Nearest[float64](3, 2)), [][]tap{{{0, 1}}, {{1, 1}}}},
		// x = 0.5 exactly between samples: Keys A=−0.75 at t=0.5 gives (−0.09375, 0.59375, 0.59375, −0.09375)
		{"bicubic 4→2", taps(Bicubic[float64](4, 2)), [][]tap{
			{{0, -0.09375}, {0, 0.59375}, {1, 0.59375}, {2, -0.09375}},
			{{1, -0.09375}, {2, 0.59375}, {3, 0.59375}, {3, -0.09375}}}},
		// shrinking by 2: triangle of half-width 2 at centres 1 and 3, cut at
		// the border to (0.75, 0.75, 0.25) and normalised by their sum 1.75
		{"bilinearAA 4→2", taps(BilinearAA[float64](4, 2)), [][]tap{
			{{0, 0.75 / 1.75}, {1, 0.75 / 1.75}, {2, 0.25 / 1.75}},
			{{1, 0.25 / 1.75}, {2, 0.75 / 1.75}, {3, 0.75 / 1.75}}}},
	}
	for _, tc := range tests {
		if fmt.Sprint(tc.got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

// TestWeightsSumToOne checks every kernel over many size pairs: indices in
// range and weights summing to 1 for each output.
func TestWeightsSumToOne(t *testing.T) {
	kernels := map[string]func(n, m int) *Taps[float64]{
		"bilinear": Bilinear[float64], "bicubic": Bicubic[float64], "nearest": Nearest[float64],
		"bilinearAA": BilinearAA[float64], "bicubicAA": BicubicAA[float64],
	}
	for name, k := range kernels {
		for n := 1; n <= 30; n++ {
			for m := 1; m <= 30; m++ {
				tp := k(n, m)
				if tp.In != n || tp.Out != m || len(tp.Off) != m+1 || len(tp.Idx) != len(tp.W) {
					t.Fatalf("%s %d→%d: malformed %+v", name, n, m, tp)
				}
				for o := range m {
					var sum float64
					for j := tp.Off[o]; j < tp.Off[o+1]; j++ {
						if tp.Idx[j] < 0 || tp.Idx[j] >= n {
							t.Fatalf("%s %d→%d output %d: index %d", name, n, m, o, tp.Idx[j])
						}
						sum += tp.W[j]
					}
					if math.Abs(sum-1) > 1e-12 {
						t.Fatalf("%s %d→%d output %d: weights sum to %v", name, n, m, o, sum)
					}
				}
			}
		}
	}
}

// TestFloat32Weights checks that the float32 taps are rounded in float32:
// bilinear 3→7 has λ = 3/7·(o+0.5) − 0.5 evaluated in float32.
func TestFloat32Weights(t *testing.T) {
	t32, t64 := Bilinear[float32](3, 7), Bilinear[float64](3, 7)
	for k := range t32.W {
		if t32.Idx[k] != t64.Idx[k] {
			t.Fatalf("tap %d: index %d vs %d", k, t32.Idx[k], t64.Idx[k])
		}
		if d := math.Abs(float64(t32.W[k]) - t64.W[k]); d > 1e-7 {
			t.Errorf("tap %d: float32 %v vs float64 %v", k, t32.W[k], t64.W[k])
		}
	}
}
