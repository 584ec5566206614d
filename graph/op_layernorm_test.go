package graph

import (
	"math"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// refLayerNorm is PyTorch's layer_norm over rows of d, in float64.
func refLayerNorm(x, w, b []float64, d int, eps float64) []float64 {
	y := make([]float64, len(x))
	for i := 0; i < len(x)/d; i++ {
		row := x[i*d : (i+1)*d]
		var mu float64
		for _, v := range row {
			mu += v
		}
		mu /= float64(d)
		var v2 float64
		for _, v := range row {
			v2 += (v - mu) * (v - mu)
		}
		v2 /= float64(d)
		for j, v := range row {
			y[i*d+j] = (v-mu)/math.Sqrt(v2+eps)*w[j] + b[j]
		}
	}
	return y
}

func TestLayerNormGradCheck(t *testing.T) {
	for _, tc := range []struct {
		m, d int
		eps  float64
	}{{3, 5, 1e-5}, {4, 8, 1e-6}, {2, 2, 1e-6}} {
		g := G.NewGraph()
		x := randNode(g, tensor.Float64, "x", 2, 1, tc.m, tc.d)
		w := randNode(g, tensor.Float64, "w", 1, 2, tc.d)
		b := randNode(g, tensor.Float64, "b", 1, 3, tc.d)
		y, err := LayerNorm(x, w, b, tc.eps)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := GradCheck(weightedSum(t, y, 4), G.Nodes{x, w, b}, GradCheckOptions{}); err != nil {
			t.Errorf("%+v: %v", tc, err)
		}
	}
}

func TestLayerNormForward(t *testing.T) {
	const m, d, eps = 5, 6, 1e-6
	// Rows with an offset and a large scale exercise the two-pass variance.
	xv := randFloats(61, m*d, 3)
	for i := range xv {
		xv[i] += 100
	}
	wv, bv := randFloats(62, d, 1), randFloats(63, d, 1)
	want := refLayerNorm(xv, wv, bv, d, eps)
	for _, tc := range []struct {
		dt  tensor.Dtype
		tol float64
	}{{tensor.Float64, 1e-12}, {tensor.Float32, 1e-5}} {
		g := G.NewGraph()
		y, err := LayerNorm(constNode(g, tc.dt, "x", xv, m, d), constNode(g, tc.dt, "w", wv, d), constNode(g, tc.dt, "b", bv, d), eps)
		if err != nil {
			t.Fatal(err)
		}
		runOnce(t, g)
		got := valueF64s(t, y.Value())
		for i := range want {
			if math.Abs(got[i]-want[i]) > tc.tol*math.Max(1, math.Abs(want[i])) {
				t.Fatalf("%v: y[%d] = %v, want %v", tc.dt, i, got[i], want[i])
			}
		}
	}
}

func TestLayerNormGolden(t *testing.T) {
	// x = [1 2 3 4]: μ = 2.5, var = 1.25; with eps = 1e-6,
	// y = (x − 2.5)/√1.250001 = ±0.447213417…, ±1.341640250… (Python, float64)
	g := G.NewGraph()
	x := constNode(g, tensor.Float64, "x", []float64{1, 2, 3, 4}, 1, 4)
	w := constNode(g, tensor.Float64, "w", []float64{1, 1, 2, 1}, 4)
	b := constNode(g, tensor.Float64, "b", []float64{0, 0, 0, 1}, 4)
	y, err := LayerNorm(x, w, b, 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	runOnce(t, g)
	want := []float64{-1.341640249843881, -0.44721341661462705, 2 * 0.44721341661462705, 1 + 1.341640249843881}
	for i, v := range valueF64s(t, y.Value()) {
		if math.Abs(v-want[i]) > 1e-12 {
			t.Errorf("y[%d] = %.17g, want %.17g", i, v, want[i])
		}
	}
}

// TestLayerNormFloat32Backward compares the float32 gradients with float64 ones.
func TestLayerNormFloat32Backward(t *testing.T) {
	const m, d = 4, 16
	xv, wv, bv := randFloats(71, m*d, 2), randFloats(72, d, 1), randFloats(73, d, 1)
	grads := map[tensor.Dtype][][]float64{}
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		g := G.NewGraph()
		x, w, b := constNode(g, dt, "x", xv, m, d), constNode(g, dt, "w", wv, d), constNode(g, dt, "b", bv, d)
		y, err := LayerNorm(x, w, b, 1e-6)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := G.Grad(weightedSum(t, y, 74), x, w, b); err != nil {
			t.Fatal(err)
		}
		runOnce(t, g)
		for _, n := range []*G.Node{x, w, b} {
			gv, err := n.Grad()
			if err != nil {
				t.Fatal(err)
			}
			grads[dt] = append(grads[dt], valueF64s(t, gv))
		}
	}
	for k, name := range []string{"dx", "dw", "db"} {
		for i, want := range grads[tensor.Float64][k] {
			if got := grads[tensor.Float32][k][i]; math.Abs(got-want) > 1e-4*math.Max(1, math.Abs(want)) {
				t.Errorf("%s[%d]: float32 %v, float64 %v", name, i, got, want)
			}
		}
	}
}

func TestLayerNormErrors(t *testing.T) {
	g := G.NewGraph()
	x := randNode(g, tensor.Float32, "x", 1, 1, 3, 4)
	w := randNode(g, tensor.Float32, "w", 1, 2, 4)
	b := randNode(g, tensor.Float32, "b", 1, 3, 4)
	w5 := randNode(g, tensor.Float32, "w5", 1, 2, 5)
	x3 := randNode(g, tensor.Float32, "x3", 1, 1, 2, 3, 4)
	for _, tc := range []struct {
		name    string
		x, w, b *G.Node
		eps     float64
	}{
		{"w of 5", x, w5, b, 1e-6},
		{"b of 5", x, w, w5, 1e-6},
		{"rank-3 x", x3, w, b, 1e-6},
		{"nil b", x, w, nil, 1e-6},
		{"eps 0", x, w, b, 0},
		{"eps NaN", x, w, b, math.NaN()},
		{"eps negative", x, w, b, -1e-5},
	} {
		if _, err := LayerNorm(tc.x, tc.w, tc.b, tc.eps); err == nil {
			t.Errorf("%s: want an error", tc.name)
		}
	}
}

// TestChainRerun reruns one machine on new inputs, as a training step does,
// and checks the loss and the input gradient of the chain
// x → LayerNorm → GELU → Dropout → SoftmaxCrossEntropy against a fresh graph:
// saved statistics, masks and probabilities must follow the new inputs.
func TestChainRerun(t *testing.T) {
	const m, d = 4, 6
	build := func(xv []float64, step uint64) (*G.ExprGraph, *G.Node, *G.Node, *G.Node) {
		g := G.NewGraph()
		x := constNode(g, tensor.Float32, "x", xv, m, d)
		w, b := constNode(g, tensor.Float32, "w", randFloats(2, d, 1), d), constNode(g, tensor.Float32, "b", randFloats(3, d, 1), d)
		h := G.Must(LayerNorm(x, w, b, 1e-6))
		h = G.Must(GELU(h, GELUExact))
		h = G.Must(Dropout(h, 0.3, &Stochastic{Training: true, Seed: 4, Step: step}, 5))
		loss := G.Must(SoftmaxCrossEntropy(h, constNode(g, tensor.Float32, "t", softTargets(6, m, d), m, d)))
		grads, err := G.Grad(loss, x)
		if err != nil {
			t.Fatal(err)
		}
		return g, x, loss, grads[0]
	}
	x1, x2 := randFloats(7, m*d, 1), randFloats(8, m*d, 2)
	g, x, loss, dx := build(x1, 0)
	mach := G.NewTapeMachine(g)
	defer mach.Close()
	if err := mach.RunAll(); err != nil {
		t.Fatal(err)
	}
	mach.Reset()
	xs := x.Value().Data().([]float32)
	for i, v := range x2 {
		xs[i] = float32(v)
	}
	if err := mach.RunAll(); err != nil {
		t.Fatal(err)
	}
	gotLoss, gotDx := valueF64s(t, loss.Value()), valueF64s(t, dx.Value())

	g2, _, loss2, dx2 := build(x2, 0)
	runOnce(t, g2)
	wantLoss, wantDx := valueF64s(t, loss2.Value()), valueF64s(t, dx2.Value())
	if gotLoss[0] != wantLoss[0] {
		t.Errorf("rerun loss %v, fresh graph %v", gotLoss[0], wantLoss[0])
	}
	for i := range wantDx {
		if gotDx[i] != wantDx[i] {
			t.Fatalf("rerun dx[%d] = %v, fresh graph %v", i, gotDx[i], wantDx[i])
		}
	}
}
