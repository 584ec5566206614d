package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// runOnce runs g once on a fresh TapeMachine.
func runOnce(t *testing.T, g *G.ExprGraph) {
	t.Helper()
	m := G.NewTapeMachine(g)
	defer m.Close()
	if err := m.RunAll(); err != nil {
		t.Fatal(err)
	}
}

// valueF64s returns a node's value (tensor or scalar) as float64s.
func valueF64s(t *testing.T, v G.Value) []float64 {
	t.Helper()
	switch d := v.Data().(type) {
	case []float64:
		return append([]float64(nil), d...)
	case []float32:
		out := make([]float64, len(d))
		for i, x := range d {
			out[i] = float64(x)
		}
		return out
	case float64:
		return []float64{d}
	case float32:
		return []float64{float64(d)}
	}
	t.Fatalf("unexpected value data %T", v.Data())
	return nil
}

// constNode makes an input node holding vals (converted to dt).
func constNode(g *G.ExprGraph, dt tensor.Dtype, name string, vals []float64, shape ...int) *G.Node {
	var back any
	if dt == tensor.Float32 {
		f := make([]float32, len(vals))
		for i, v := range vals {
			f[i] = float32(v)
		}
		back = f
	} else {
		back = append([]float64(nil), vals...)
	}
	t := tensor.New(tensor.WithShape(shape...), tensor.WithBacking(back))
	return G.NewTensor(g, dt, len(shape), G.WithShape(shape...), G.WithName(name), G.WithValue(t))
}

// randFloats returns n N(0, scale²) values.
func randFloats(seed uint64, n int, scale float64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 3))
	out := make([]float64, n)
	for i := range out {
		out[i] = rng.NormFloat64() * scale
	}
	return out
}

// softTargets returns b rows of c positive values summing to 1.
func softTargets(seed uint64, b, c int) []float64 {
	rng := rand.New(rand.NewPCG(seed, 5))
	out := make([]float64, b*c)
	for i := 0; i < b; i++ {
		var s float64
		for j := 0; j < c; j++ {
			out[i*c+j] = rng.Float64() + 0.05
			s += out[i*c+j]
		}
		for j := 0; j < c; j++ {
			out[i*c+j] /= s
		}
	}
	return out
}

// naiveLogSoftmax is log(exp(x)/Σexp(x)) per row, unshifted: the reference
// for moderate inputs.
func naiveLogSoftmax(x []float64, c int) []float64 {
	out := make([]float64, len(x))
	for i := 0; i < len(x)/c; i++ {
		var s float64
		for j := 0; j < c; j++ {
			s += math.Exp(x[i*c+j])
		}
		for j := 0; j < c; j++ {
			out[i*c+j] = math.Log(math.Exp(x[i*c+j]) / s)
		}
	}
	return out
}

func TestLogSoftmaxGradCheck(t *testing.T) {
	for _, shape := range [][]int{{3, 5}, {2, 7}, {2, 3, 4}, {4, 1}} {
		g := G.NewGraph()
		x := randNode(g, tensor.Float64, "x", 2, 11, shape...)
		y, err := LogSoftmax(x)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := GradCheck(weightedSum(t, y, 12), G.Nodes{x}, GradCheckOptions{}); err != nil {
			t.Errorf("%v: %v", shape, err)
		}
	}
}

func TestLogSoftmaxForward(t *testing.T) {
	const m, c = 4, 6
	in := randFloats(21, m*c, 3)
	want := naiveLogSoftmax(in, c)
	for _, tc := range []struct {
		dt  tensor.Dtype
		tol float64
	}{{tensor.Float64, 1e-12}, {tensor.Float32, 1e-5}} {
		g := G.NewGraph()
		y, err := LogSoftmax(constNode(g, tc.dt, "x", in, m, c))
		if err != nil {
			t.Fatal(err)
		}
		runOnce(t, g)
		got := valueF64s(t, y.Value())
		for i := range want {
			if math.Abs(got[i]-want[i]) > tc.tol {
				t.Fatalf("%v: y[%d] = %v, want %v", tc.dt, i, got[i], want[i])
			}
		}
	}
}

func TestLogSoftmaxHugeLogits(t *testing.T) {
	in := []float64{1e4, 0, -1e4, 1e4, 1e4, 1e4}
	want := []float64{0, -1e4, -2e4, -math.Log(3), -math.Log(3), -math.Log(3)}
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		g := G.NewGraph()
		x := constNode(g, dt, "x", in, 2, 3)
		y, err := LogSoftmax(x)
		if err != nil {
			t.Fatal(err)
		}
		cost := weightedSum(t, y, 3)
		if _, err := G.Grad(cost, x); err != nil {
			t.Fatal(err)
		}
		runOnce(t, g)
		got := valueF64s(t, y.Value())
		for i := range want {
			if math.IsNaN(got[i]) || math.Abs(got[i]-want[i]) > 1e-6*math.Max(1, math.Abs(want[i])) {
				t.Errorf("%v: y[%d] = %v, want %v", dt, i, got[i], want[i])
			}
		}
		gv, err := x.Grad()
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range valueF64s(t, gv) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Errorf("%v: dx[%d] = %v", dt, i, v)
			}
		}
	}
}

// refCE is the soft-target cross entropy computed independently: the mean
// over rows of −Σ t·log softmax(z), with the log softmax taken naively.
func refCE(z, tg []float64, c int) float64 {
	ls := naiveLogSoftmax(z, c)
	var l float64
	for i := range z {
		l -= tg[i] * ls[i]
	}
	return l / float64(len(z)/c)
}

func TestSoftmaxCrossEntropyGradCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		b, c int
		norm bool    // targets rows sum to 1
		tau  float64 // temperature (SoftmaxCrossEntropyT)
	}{
		{"soft-3x5", 3, 5, true, 1},
		{"soft-4x10", 4, 10, true, 1},
		{"unnormalised-2x4", 2, 4, false, 1},
		{"tau-3-3x5", 3, 5, true, 3},
		{"tau-0.5-unnormalised-2x4", 2, 4, false, 0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := G.NewGraph()
			z := randNode(g, tensor.Float64, "z", 2, 31, tc.b, tc.c)
			tv := softTargets(32, tc.b, tc.c)
			if !tc.norm {
				for i := range tv {
					tv[i] *= 1.7
				}
			}
			tg := constNode(g, tensor.Float64, "t", tv, tc.b, tc.c)
			loss, err := SoftmaxCrossEntropyT(z, tg, tc.tau)
			if err != nil {
				t.Fatal(err)
			}
			if !loss.IsScalar() {
				t.Fatalf("loss shape %v, want a scalar", loss.Shape())
			}
			// Scale by 2.5 so that dloss ≠ 1 reaches the gradient op.
			cost := G.Must(G.Mul(loss, G.NewConstant(2.5)))
			if _, err := GradCheck(cost, G.Nodes{z}, GradCheckOptions{}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestSoftmaxCrossEntropyTemperature: CE(z, t) at temperature τ is the
// cross entropy of z/τ, and leaves z's values as they were.
func TestSoftmaxCrossEntropyTemperature(t *testing.T) {
	const b, c, tau = 3, 6, 2.5
	zv := randFloats(51, b*c, 3)
	tv := softTargets(52, b, c)
	scaled := make([]float64, len(zv))
	for i, v := range zv {
		scaled[i] = v / tau
	}
	want := refCE(scaled, tv, c)
	g := G.NewGraph()
	z := constNode(g, tensor.Float64, "z", zv, b, c)
	loss, err := SoftmaxCrossEntropyT(z, constNode(g, tensor.Float64, "t", tv, b, c), tau)
	if err != nil {
		t.Fatal(err)
	}
	runOnce(t, g)
	if got := valueF64s(t, loss.Value())[0]; math.Abs(got-want) > 1e-12 {
		t.Errorf("loss = %.15g, want %.15g", got, want)
	}
	for i, v := range valueF64s(t, z.Value()) {
		if v != zv[i] {
			t.Fatalf("logit %d changed from %v to %v", i, zv[i], v)
		}
	}
	for _, bad := range []float64{0, -1, math.Inf(1), math.NaN()} {
		if _, err := SoftmaxCrossEntropyT(z, z, bad); err == nil {
			t.Errorf("temperature %v accepted", bad)
		}
	}
}

func TestSoftmaxCrossEntropyForward(t *testing.T) {
	const b, c = 5, 7
	zv := randFloats(41, b*c, 2)
	tv := softTargets(42, b, c)
	want := refCE(zv, tv, c)
	var got64 float64
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		g := G.NewGraph()
		loss, err := SoftmaxCrossEntropy(constNode(g, dt, "z", zv, b, c), constNode(g, dt, "t", tv, b, c))
		if err != nil {
			t.Fatal(err)
		}
		runOnce(t, g)
		if loss.Dtype() != dt {
			t.Fatalf("loss dtype %v, want %v", loss.Dtype(), dt)
		}
		got := valueF64s(t, loss.Value())[0]
		tol := 1e-12
		if dt == tensor.Float32 {
			tol = 1e-5
			if math.Abs(got-got64) > 1e-5 {
				t.Errorf("float32 loss %v, float64 loss %v", got, got64)
			}
		} else {
			got64 = got
		}
		if math.Abs(got-want) > tol {
			t.Errorf("%v: loss = %.15g, want %.15g", dt, got, want)
		}
	}
}

func TestSoftmaxCrossEntropyOneHot(t *testing.T) {
	const b, c = 4, 5
	labels := []int{0, 3, 4, 3}
	zv := randFloats(51, b*c, 3)
	tv := make([]float64, b*c)
	for i, l := range labels {
		tv[i*c+l] = 1
	}
	g := G.NewGraph()
	z := constNode(g, tensor.Float64, "z", zv, b, c)
	loss, err := SoftmaxCrossEntropy(z, constNode(g, tensor.Float64, "t", tv, b, c))
	if err != nil {
		t.Fatal(err)
	}
	ls, err := LogSoftmax(z)
	if err != nil {
		t.Fatal(err)
	}
	runOnce(t, g)
	lsv := valueF64s(t, ls.Value())
	var want float64
	for i, l := range labels {
		want -= lsv[i*c+l]
	}
	want /= b
	if got := valueF64s(t, loss.Value())[0]; math.Abs(got-want) > 1e-12 {
		t.Errorf("one-hot loss = %v, −mean log_softmax at the labels = %v", got, want)
	}
}

func TestSoftmaxCrossEntropyHugeLogits(t *testing.T) {
	zv := []float64{1e4, 0, -1e4, -1e4, 1e4, 0}
	tv := []float64{0, 1, 0, 0.5, 0.5, 0}
	want := (1e4 + 0.5*2e4) / 2
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		g := G.NewGraph()
		z := constNode(g, dt, "z", zv, 2, 3)
		loss, err := SoftmaxCrossEntropy(z, constNode(g, dt, "t", tv, 2, 3))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := G.Grad(loss, z); err != nil {
			t.Fatal(err)
		}
		runOnce(t, g)
		if got := valueF64s(t, loss.Value())[0]; math.Abs(got-want) > 1e-6*want {
			t.Errorf("%v: loss = %v, want %v", dt, got, want)
		}
		gv, err := z.Grad()
		if err != nil {
			t.Fatal(err)
		}
		// softmax rows are one-hot at the maxima: dz = (p − t)/B.
		wantDz := []float64{0.5, -0.5, 0, -0.25, 0.25, 0}
		for i, v := range valueF64s(t, gv) {
			if math.IsNaN(v) || math.Abs(v-wantDz[i]) > 1e-6 {
				t.Errorf("%v: dz[%d] = %v, want %v", dt, i, v, wantDz[i])
			}
		}
	}
}

func TestSoftmaxCrossEntropyErrors(t *testing.T) {
	g := G.NewGraph()
	z := randNode(g, tensor.Float32, "z", 1, 1, 3, 4)
	for name, tg := range map[string]*G.Node{
		"shape mismatch": randNode(g, tensor.Float32, "t1", 1, 2, 3, 5),
		"rank 1":         randNode(g, tensor.Float32, "t2", 1, 2, 12),
		"nil":            nil,
	} {
		if _, err := SoftmaxCrossEntropy(z, tg); err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
	v := randNode(g, tensor.Float32, "v", 1, 2, 12)
	if _, err := SoftmaxCrossEntropy(v, v); err == nil {
		t.Error("rank-1 logits: want an error")
	}
}

func ExampleSoftmaxCrossEntropy() {
	g := G.NewGraph()
	// Two samples, three classes: a one-hot label and a label-smoothed one.
	logits := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 3), G.WithName("logits"),
		G.WithValue(tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float64{2, 0, 0, 0, 1, 0}))))
	targets := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 3), G.WithName("targets"),
		G.WithValue(tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float64{1, 0, 0, 0.05, 0.9, 0.05}))))
	loss, err := SoftmaxCrossEntropy(logits, targets)
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := G.Grad(loss, logits); err != nil {
		fmt.Println(err)
		return
	}
	m := G.NewTapeMachine(g)
	defer m.Close()
	if err := m.RunAll(); err != nil {
		fmt.Println(err)
		return
	}
	dz, _ := logits.Grad()
	fmt.Printf("loss %.4f\n", loss.Value().Data())
	fmt.Printf("dz %.4f\n", dz.Data())
	// Output:
	// loss 0.4455
	// dz [-0.1065 0.0533 0.0533 0.0810 -0.1619 0.0810]
}
