package graph

// Regression tests for bugs in gorgonia.org/gorgonia v0.9.18 that our ops work
// around. Each test first shows the upstream bug (it fails, asking for this
// file to be revisited, if the bug has gone) and then that our op is correct.

import (
	"math"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// upstreamBug logs a still-present upstream bug, or fails if it has gone.
func upstreamBug(t *testing.T, present bool, what string) {
	t.Helper()
	if present {
		t.Logf("upstream bug present: %s", what)
		return
	}
	t.Errorf("upstream bug gone: %s; revisit the workaround and this test", what)
}

// dropoutGrad runs cost = Σ drop(x)⊙R with x = 1…n and R = 1…n on a
// TapeMachine and returns y, dx and R.
func dropoutGrad(t *testing.T, drop func(*G.Node) (*G.Node, error)) (y, dx, r []float64) {
	t.Helper()
	const n = 64
	seq := make([]float64, n)
	for i := range seq {
		seq[i] = float64(i + 1)
	}
	g := G.NewGraph()
	x := constNode(g, tensor.Float64, "x", seq, 8, 8)
	out, err := drop(x)
	if err != nil {
		t.Fatal(err)
	}
	rn := constNode(g, tensor.Float64, "R", seq, 8, 8)
	if _, err := G.Grad(G.Must(G.Sum(G.Must(G.HadamardProd(out, rn)))), x); err != nil {
		t.Fatal(err)
	}
	runOnce(t, g)
	gv, err := x.Grad()
	if err != nil {
		t.Fatal(err)
	}
	return valueF64s(t, out.Value()), valueF64s(t, gv), seq
}

// TestUpstreamDropoutP0 shows Gorgonia's Dropout backward zeroing the
// gradient at p = 0 (it computes dy/p guarded by p ≠ 0), where the op is the
// identity and the gradient must be dy.
func TestUpstreamDropoutP0(t *testing.T) {
	_, dx, r := dropoutGrad(t, func(x *G.Node) (*G.Node, error) { return G.Dropout(x, 0) })
	allZero := true
	for _, v := range dx {
		allZero = allZero && v == 0
	}
	upstreamBug(t, allZero, "Gorgonia Dropout(x, 0) has a zero gradient instead of dy")

	s := &Stochastic{Training: true, Seed: 1}
	_, dx, r = dropoutGrad(t, func(x *G.Node) (*G.Node, error) { return Dropout(x, 0, s, 1) })
	for i := range dx {
		if dx[i] != r[i] {
			t.Fatalf("our Dropout(p=0): dx[%d] = %v, want dy = %v", i, dx[i], r[i])
		}
	}
}

// TestUpstreamDropoutScale shows Gorgonia's Dropout backward scaling kept
// elements by 1/p instead of 1/(1−p), the forward's scale.
func TestUpstreamDropoutScale(t *testing.T) {
	const p = 0.25
	y, dx, r := dropoutGrad(t, func(x *G.Node) (*G.Node, error) { return G.Dropout(x, p) })
	kept, byP := 0, 0
	for i := range y {
		if y[i] == 0 {
			continue
		}
		kept++
		if math.Abs(dx[i]-r[i]/p) < 1e-12 {
			byP++
		}
	}
	if kept == 0 {
		t.Fatal("Gorgonia Dropout(0.25) dropped all 64 elements")
	}
	upstreamBug(t, byP == kept, "Gorgonia Dropout backward scales kept elements by 1/p, not 1/(1−p)")

	s := &Stochastic{Training: true, Seed: 1, Step: 2}
	y, dx, r = dropoutGrad(t, func(x *G.Node) (*G.Node, error) { return Dropout(x, p, s, 1) })
	kept = 0
	for i := range y {
		want := 0.0
		if y[i] != 0 {
			kept++
			want = r[i] / (1 - p)
			if math.Abs(y[i]-float64(i+1)/(1-p)) > 1e-12 {
				t.Fatalf("our Dropout: y[%d] = %v, want x/(1−p) = %v", i, y[i], float64(i+1)/(1-p))
			}
		}
		if math.Abs(dx[i]-want) > 1e-12 {
			t.Fatalf("our Dropout: dx[%d] = %v, want %v", i, dx[i], want)
		}
	}
	if kept == 0 || kept == len(y) {
		t.Fatalf("our Dropout kept %d of %d: the check exercises only one branch", kept, len(y))
	}
}

// TestUpstreamDropoutMerged shows two Gorgonia Dropouts of one node with
// different p merged into one node: the op hash ignores p.
func TestUpstreamDropoutMerged(t *testing.T) {
	g := G.NewGraph()
	x := randNode(g, tensor.Float64, "x", 1, 1, 2, 3)
	a, err := G.Dropout(x, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := G.Dropout(x, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	upstreamBug(t, a == b, "Gorgonia Dropout(x, 0.1) and Dropout(x, 0.5) are one node")

	s := &Stochastic{Training: true}
	c, _ := Dropout(x, 0.1, s, 1)
	d, _ := Dropout(x, 0.1, s, 1)
	if c == d {
		t.Error("two of our Dropouts of one node were merged")
	}
}

// TestUpstreamSoftmaxMerged shows Gorgonia's SoftMax(x) and LogSoftMax(x)
// hashing alike (the hash omits isLog), so the second returns the first's
// node and LogSoftMax yields probabilities. Our LogSoftmax followed by Exp
// gives both.
func TestUpstreamSoftmaxMerged(t *testing.T) {
	xv := []float64{1, 2, 3, 4, -1, 0, 0.5, 2}
	want := naiveLogSoftmax(xv, 4)

	g := G.NewGraph()
	x := constNode(g, tensor.Float64, "x", xv, 2, 4)
	s, err := G.SoftMax(x)
	if err != nil {
		t.Fatal(err)
	}
	l, err := G.LogSoftMax(x)
	if err != nil {
		t.Fatal(err)
	}
	ours, err := LogSoftmax(x)
	if err != nil {
		t.Fatal(err)
	}
	probs := G.Must(G.Exp(ours))
	runOnce(t, g)
	lv := valueF64s(t, l.Value())
	upstreamBug(t, s == l && lv[0] > 0, "Gorgonia SoftMax(x) and LogSoftMax(x) are one node; LogSoftMax returns probabilities")

	ov, pv := valueF64s(t, ours.Value()), valueF64s(t, probs.Value())
	for i := range want {
		if math.Abs(ov[i]-want[i]) > 1e-12 || math.Abs(pv[i]-math.Exp(want[i])) > 1e-12 {
			t.Fatalf("ours: log_softmax[%d] = %v (want %v), softmax = %v (want %v)", i, ov[i], want[i], pv[i], math.Exp(want[i]))
		}
	}
}

// TestUpstreamInverseSqrtGrad shows Gorgonia's InverseSqrt gradient,
// −dy/(2y³), against the true −dy·y³/2 (y = x^−½), with finite differences.
// Our LayerNorm computes rstd and its derivative itself and passes.
func TestUpstreamInverseSqrtGrad(t *testing.T) {
	g := G.NewGraph()
	xv := []float64{4, 0.25, 9, 2}
	x := constNode(g, tensor.Float64, "x", xv, 4)
	cost := G.Must(G.Sum(G.Must(G.InverseSqrt(x))))
	_, err := GradCheck(cost, G.Nodes{x}, GradCheckOptions{})
	upstreamBug(t, err != nil, "Gorgonia InverseSqrt gradient disagrees with finite differences")
	if err != nil {
		t.Logf("finite differences: %v", err)
	}

	g = G.NewGraph()
	xn := randNode(g, tensor.Float64, "x", 0.3, 201, 3, 6)
	w := randNode(g, tensor.Float64, "w", 1, 202, 6)
	b := randNode(g, tensor.Float64, "b", 1, 203, 6)
	y, err := LayerNorm(xn, w, b, 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := GradCheck(weightedSum(t, y, 204), G.Nodes{xn, w, b}, GradCheckOptions{}); err != nil {
		t.Fatalf("our LayerNorm: %v", err)
	}
}
