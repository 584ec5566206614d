package graph

import (
	"fmt"
	"math"
	"runtime"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/graph/kernels"
)

// residualChain builds two pre-norm blocks, x ← x + Linear(GELU(Linear(LN(x)))),
// closing each with Residual or with Add, and the gradients of a weighted
// sum of the output with respect to x and every weight.
func residualChain(t *testing.T, dt tensor.Dtype, useResidual bool) (*G.ExprGraph, G.Nodes, G.Nodes) {
	t.Helper()
	const m, d, hidden = 256, 320, 96
	g := G.NewGraph()
	x0 := randNode(g, dt, "x", 1, 1, m, d)
	wrt := G.Nodes{x0}
	x := x0
	for i := uint64(0); i < 2; i++ {
		name := func(s string) string { return fmt.Sprintf("blocks.%d.%s", i, s) } // distinct: Gorgonia merges nodes by name
		w := randNode(g, dt, name("lnw"), 1, 10+i, d)
		b := randNode(g, dt, name("lnb"), 1, 20+i, d)
		w1 := randNode(g, dt, name("w1"), 0.05, 30+i, hidden, d)
		w2 := randNode(g, dt, name("w2"), 0.05, 40+i, d, hidden)
		wrt = append(wrt, w, b, w1, w2)
		n, err := LayerNorm(x, w, b, 1e-6)
		if err != nil {
			t.Fatal(err)
		}
		h := G.Must(Linear(n, w1, nil))
		h = G.Must(GELU(h, GELUExact))
		h = G.Must(Linear(h, w2, nil))
		if useResidual {
			x, err = Residual(x, n, h)
		} else {
			x, err = Add(x, h)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	grads, err := G.Grad(weightedSum(t, x, 99), wrt...)
	if err != nil {
		t.Fatal(err)
	}
	return g, append(G.Nodes{x}, grads...), wrt
}

// TestResidualMatchesAdd: Residual's output and every gradient equal Add's
// bit for bit, in float32 and float64 and at 1, 2 and 8 cores (the same
// across core counts: splitEqual), while its graph has no gradient adds and
// Add's has one per fork.
func TestResidualMatchesAdd(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		var ref [][]float64
		for _, procs := range []int{1, 2, 8} {
			prev := runtime.GOMAXPROCS(procs)
			var vals [2][][]float64
			for k, useRes := range []bool{false, true} {
				g, outs, _ := residualChain(t, dt, useRes)
				if adds := GorgoniaAdds(g); useRes && adds != 0 || !useRes && adds != 2 {
					t.Errorf("%v residual=%v: %d gradient adds, want %d", dt, useRes, adds, map[bool]int{false: 2, true: 0}[useRes])
				}
				runOnce(t, g)
				for _, o := range outs {
					vals[k] = append(vals[k], valueF64s(t, o.Value()))
				}
			}
			runtime.GOMAXPROCS(prev)
			for i := range vals[0] {
				if !sameBits(vals[0][i], vals[1][i]) {
					t.Errorf("%v, %d cores: output %d (0: y, then x and weights' gradients) differs between Add and Residual", dt, procs, i)
				}
			}
			if ref == nil {
				ref = vals[1]
				continue
			}
			for i := range ref {
				if !splitEqual(ref[i], vals[1][i]) {
					t.Errorf("%v: output %d differs between 1 and %d cores", dt, i, procs)
				}
			}
		}
	}
}

// splitEqual compares results computed with different core counts or
// batch sizes: bit for bit where the SGEMM is split-invariant (the native
// kernels), within 1e-5 relative where it is not (-tags openblas).
func splitEqual(a, b []float64) bool {
	if kernels.SplitInvariant {
		return sameBits(a, b)
	}
	return maxRelDiff(a, b) <= 1e-5
}

func sameBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// TestResidualGradCheck: Residual's gradients against finite differences.
func TestResidualGradCheck(t *testing.T) {
	g := G.NewGraph()
	x := randNode(g, tensor.Float64, "x", 1, 1, 4, 6)
	w := randNode(g, tensor.Float64, "w", 1, 2, 6)
	b := randNode(g, tensor.Float64, "b", 1, 3, 6)
	w1 := randNode(g, tensor.Float64, "w1", 0.5, 4, 6, 6)
	n := G.Must(LayerNorm(x, w, b, 1e-6))
	h := G.Must(Linear(n, w1, nil))
	y, err := Residual(x, n, h)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := GradCheck(weightedSum(t, y, 5), G.Nodes{x, w, b, w1}, GradCheckOptions{}); err != nil {
		t.Error(err)
	}
}

func TestResidualErrors(t *testing.T) {
	g := G.NewGraph()
	x := randNode(g, tensor.Float64, "x", 1, 1, 4, 6)
	other := randNode(g, tensor.Float64, "o", 1, 2, 4, 6)
	w := randNode(g, tensor.Float64, "w", 1, 2, 6)
	b := randNode(g, tensor.Float64, "b", 1, 3, 6)
	n := G.Must(LayerNorm(x, w, b, 1e-6))
	h := G.Must(Linear(n, randNode(g, tensor.Float64, "w1", 1, 4, 6, 6), nil))
	if _, err := Residual(other, n, h); err == nil {
		t.Error("Residual accepted a LayerNorm of another tensor")
	}
	if _, err := Residual(x, h, h); err == nil {
		t.Error("Residual accepted a norm that is no LayerNorm")
	}
	if _, err := Residual(x, n, randNode(g, tensor.Float64, "s", 1, 5, 4, 5)); err == nil {
		t.Error("Residual accepted shapes that differ")
	}
	if _, err := Residual(x, n, nil); err == nil {
		t.Error("Residual accepted a nil branch")
	}
	if _, err := Residual(x, n, h); err != nil {
		t.Fatal(err)
	}
	if _, err := Residual(x, n, h); err == nil {
		t.Error("one LayerNorm closed two residuals")
	}
}
