package optim

import (
	"math"
	"testing"
)

func TestClipGradNorm(t *testing.T) {
	// Global norm of (3, 4) and (12) is 13.
	mk := func() []Param {
		return []Param{
			{Name: "a", Shape: []int{2}, Value: make([]float32, 2), Grad: []float32{3, 4}},
			{Name: "b", Shape: []int{1}, Value: make([]float32, 1), Grad: []float32{12}},
		}
	}
	tests := []struct {
		name    string
		maxNorm float64
		scale   float64 // expected factor on every gradient
	}{
		{"clips", 1.3, 1.3 / (13 + 1e-6)},
		{"clips to half", 6.5, 6.5 / (13 + 1e-6)},
		{"norm below max", 20, 1},
		{"norm at max: scale just below 1 is applied", 13, 13 / (13 + 1e-6)},
		{"off", 0, 1},
	}
	for _, tc := range tests {
		ps := mk()
		norm := ClipGradNorm(ps, tc.maxNorm)
		if norm != 13 {
			t.Errorf("%s: norm %v, want 13", tc.name, norm)
		}
		want := []float32{float32(3) * float32(tc.scale), float32(4) * float32(tc.scale), float32(12) * float32(tc.scale)}
		got := []float32{ps[0].Grad[0], ps[0].Grad[1], ps[1].Grad[0]}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s: grads %v, want %v", tc.name, got, want)
				break
			}
		}
		if tc.scale < 1 {
			if after := ClipGradNorm(ps, 0); math.Abs(after-tc.maxNorm) > 1e-5*tc.maxNorm {
				t.Errorf("%s: norm after clipping %v, want %v", tc.name, after, tc.maxNorm)
			}
		}
	}
}

func TestClipGradNormLongSum(t *testing.T) {
	// 1001 values (not a multiple of the 4 accumulators) of 0.5: norm √1001/2.
	g := make([]float32, 1001)
	for i := range g {
		g[i] = 0.5
	}
	if norm, want := ClipGradNorm([]Param{{Name: "w", Grad: g}}, 0), math.Sqrt(1001)/2; math.Abs(norm-want) > 1e-12 {
		t.Errorf("norm %v, want %v", norm, want)
	}
}

func TestClipNonFinite(t *testing.T) {
	for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
		ps := []Param{
			{Name: "ok", Grad: []float32{1, 2}},
			{Name: "blocks.1.mlp.fc2.weight", Grad: []float32{3, bad}},
			{Name: "late", Grad: []float32{bad}},
		}
		norm := ClipGradNorm(ps, 1)
		if !math.IsNaN(norm) && !math.IsInf(norm, 1) {
			t.Errorf("grad %v: norm %v, want NaN or +Inf", bad, norm)
		}
		if ps[0].Grad[0] != 1 {
			t.Errorf("grad %v: gradients were scaled by a non-finite norm", bad)
		}
		if name, ok := GradsFinite(ps); ok || name != "blocks.1.mlp.fc2.weight" {
			t.Errorf("grad %v: GradsFinite = %q, %v; want the first bad tensor", bad, name, ok)
		}
	}
	if name, ok := GradsFinite([]Param{{Name: "a", Grad: []float32{0, -1e38, 1e-45}}}); !ok {
		t.Errorf("GradsFinite flagged %q holding only finite values", name)
	}
	// The norm is finite exactly when every gradient is (train.Step runs
	// GradsFinite only when it is not): float32's largest squares do not
	// overflow the float64 sum, even a billion of them.
	huge := make([]float32, 1<<20)
	for i := range huge {
		huge[i] = -math.MaxFloat32
	}
	ps := make([]Param, 1024)
	for i := range ps {
		ps[i] = Param{Name: "huge", Grad: huge}
	}
	if norm := ClipGradNorm(ps, 0); math.IsNaN(norm) || math.IsInf(norm, 0) {
		t.Errorf("norm of 2^30 gradients of -MaxFloat32 = %v, want finite", norm)
	}
}
