package graph

import (
	"math"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func TestGELUGradCheck(t *testing.T) {
	for _, approx := range []GELUApprox{GELUExact, GELUTanh} {
		for _, shape := range [][]int{{3, 4}, {2, 3, 5}, {7}} {
			g := G.NewGraph()
			x := randNode(g, tensor.Float64, "x", 2, 81, shape...)
			y, err := GELU(x, approx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := GradCheck(weightedSum(t, y, 82), G.Nodes{x}, GradCheckOptions{}); err != nil {
				t.Errorf("%v %v: %v", approx, shape, err)
			}
		}
	}
}

func TestGELUGolden(t *testing.T) {
	in := []float64{1, -1, 2, -3, 0.5, 0}
	// Python: 0.5*x*(1+math.erf(x/math.sqrt(2))) and the tanh form.
	want := map[GELUApprox][]float64{
		GELUExact: {0.8413447460685429, -0.15865525393145707, 1.9544997361036416, -0.00404969409489031, 0.34573123063700656, 0},
		GELUTanh:  {0.8411919906082768, -0.15880800939172324, 1.954597694087775, -0.0036373920817729943, 0.34571400982514394, 0},
	}
	for approx, w := range want {
		for _, tc := range []struct {
			dt  tensor.Dtype
			tol float64
		}{{tensor.Float64, 1e-15}, {tensor.Float32, 1e-6}} {
			g := G.NewGraph()
			y, err := GELU(constNode(g, tc.dt, "x", in, 2, 3), approx)
			if err != nil {
				t.Fatal(err)
			}
			runOnce(t, g)
			for i, v := range valueF64s(t, y.Value()) {
				if math.Abs(v-w[i]) > tc.tol {
					t.Errorf("%v %v: GELU(%v) = %.17g, want %.17g", approx, tc.dt, in[i], v, w[i])
				}
			}
		}
	}
}

// TestGELUFloat32 checks the float32 kernels against the float64 ones on a
// wide range of inputs, forward and backward.
func TestGELUFloat32(t *testing.T) {
	const n = geluChunk + 3 // large enough for the parallel path
	xv := randFloats(91, n, 4)
	xv[0], xv[1] = 12, -12
	for _, approx := range []GELUApprox{GELUExact, GELUTanh} {
		var fwd, bwd [2][]float64
		for k, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
			g := G.NewGraph()
			x := constNode(g, dt, "x", xv, n)
			y, err := GELU(x, approx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := G.Grad(weightedSum(t, y, 92), x); err != nil {
				t.Fatal(err)
			}
			runOnce(t, g)
			gv, err := x.Grad()
			if err != nil {
				t.Fatal(err)
			}
			fwd[k], bwd[k] = valueF64s(t, y.Value()), valueF64s(t, gv)
		}
		for i := range xv {
			if d := math.Abs(fwd[0][i] - fwd[1][i]); d > 1e-5*math.Max(1, math.Abs(fwd[0][i])) {
				t.Errorf("%v forward x=%v: float32 %v, float64 %v", approx, xv[i], fwd[1][i], fwd[0][i])
			}
			if d := math.Abs(bwd[0][i] - bwd[1][i]); d > 1e-5*math.Max(1, math.Abs(bwd[0][i])) {
				t.Errorf("%v backward x=%v: float32 %v, float64 %v", approx, xv[i], bwd[1][i], bwd[0][i])
			}
		}
	}
}

func TestGELUApprox(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want GELUApprox
		ok   bool
	}{{"none", GELUExact, true}, {"", GELUExact, true}, {"exact", GELUExact, true}, {"tanh", GELUTanh, true}, {"erf", 0, false}} {
		got, err := ParseGELUApprox(tc.in)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("ParseGELUApprox(%q) = %v, %v", tc.in, got, err)
		}
		if tc.ok && tc.in != "" && tc.in != "exact" && got.String() != tc.in {
			t.Errorf("%v.String() = %q, want %q", got, got.String(), tc.in)
		}
	}
	g := G.NewGraph()
	x := randNode(g, tensor.Float32, "x", 1, 1, 3)
	if _, err := GELU(x, GELUApprox(7)); err == nil {
		t.Error("GELUApprox(7): want an error")
	}
}
