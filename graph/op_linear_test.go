package graph

import (
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// randNode makes an input node filled with N(0, scale²) values.
func randNode(g *G.ExprGraph, dt tensor.Dtype, name string, scale float64, seed uint64, shape ...int) *G.Node {
	rng := rand.New(rand.NewPCG(seed, 1))
	t := tensor.New(tensor.Of(dt), tensor.WithShape(shape...))
	switch d := t.Data().(type) {
	case []float64:
		for i := range d {
			d[i] = rng.NormFloat64() * scale
		}
	case []float32:
		for i := range d {
			d[i] = float32(rng.NormFloat64() * scale)
		}
	}
	return G.NewTensor(g, dt, len(shape), G.WithShape(shape...), G.WithName(name), G.WithValue(t))
}

// weightedSum reduces y to a scalar Σ y⊙R with a fixed random R, so every
// output element carries a distinct upstream gradient.
func weightedSum(t *testing.T, y *G.Node, seed uint64) *G.Node {
	t.Helper()
	r := randNode(y.Graph(), y.Dtype(), "R", 1, seed, y.Shape()...)
	c, err := G.Sum(G.Must(G.HadamardProd(y, r)))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestLinearGradCheck(t *testing.T) {
	for _, tc := range []struct {
		name    string
		bias    bool
		wShape  []int
		m, k, n int
	}{
		{"bias", true, []int{5, 7}, 4, 7, 5},
		{"nobias", false, []int{3, 6}, 2, 6, 3},
		{"conv-weight", true, []int{3, 2, 2, 2}, 4, 8, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := G.NewGraph()
			x := randNode(g, tensor.Float64, "x", 1, 1, tc.m, tc.k)
			w := randNode(g, tensor.Float64, "w", 1, 2, tc.wShape...)
			var b *G.Node
			wrt := G.Nodes{x, w}
			if tc.bias {
				b = randNode(g, tensor.Float64, "b", 1, 3, tc.n)
				wrt = append(wrt, b)
			}
			y, err := Linear(x, w, b)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := GradCheck(weightedSum(t, y, 9), wrt, GradCheckOptions{}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestLinearMatchesGorgonia(t *testing.T) {
	g := G.NewGraph()
	x := randNode(g, tensor.Float32, "x", 1, 1, 6, 4)
	w := randNode(g, tensor.Float32, "w", 1, 2, 3, 4)
	b := randNode(g, tensor.Float32, "b", 1, 3, 3)
	y, err := Linear(x, w, b)
	if err != nil {
		t.Fatal(err)
	}
	ref := G.Must(G.BroadcastAdd(G.Must(G.Mul(x, G.Must(G.Transpose(w)))), b, nil, []byte{0}))
	runOnce(t, g)
	got, want := y.Value().Data().([]float32), ref.Value().Data().([]float32)
	for i := range got {
		if d := got[i] - want[i]; d > 1e-5 || d < -1e-5 {
			t.Fatalf("y[%d] = %v, Gorgonia primitives give %v", i, got[i], want[i])
		}
	}
}

func TestLinearShapeErrors(t *testing.T) {
	g := G.NewGraph()
	x := randNode(g, tensor.Float32, "x", 1, 1, 6, 4)
	w := randNode(g, tensor.Float32, "w", 1, 2, 3, 5)
	if _, err := Linear(x, w, nil); err == nil {
		t.Fatal("want an error for 4 inputs against a (3,5) weight")
	}
	w2 := randNode(g, tensor.Float32, "w2", 1, 2, 3, 4)
	b := randNode(g, tensor.Float32, "b", 1, 3, 4)
	if _, err := Linear(x, w2, b); err == nil {
		t.Fatal("want an error for a bias of 4 against 3 outputs")
	}
}
