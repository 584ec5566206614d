package layers

import (
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/graph"
)

func randFor(name string) *rand.Rand { return rand.New(rand.NewPCG(11, graph.StreamID(name))) }

// randomModel returns a float64 model of c whose every parameter is drawn
// from trunc_normal(0.5), larger than timm's init so every path carries
// signal.
func randomModel(t *testing.T, c Config, seed uint64) *VisionTransformer {
	t.Helper()
	m, err := New(c, tensor.Float64, seed)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range m.Params {
		InitTruncNormal(p.Value, 0.5, randFor(p.Name))
	}
	return m
}

// weightedSum reduces y to Σ y⊙R for a fixed R, so every output carries a
// distinct gradient.
func weightedSum(t *testing.T, y *G.Node) *G.Node {
	t.Helper()
	r := tensor.New(tensor.Of(y.Dtype()), tensor.WithShape(y.Shape()...))
	d := r.Data().([]float64)
	for i := range d {
		d[i] = math.Cos(float64(i) * 1.3)
	}
	rn := G.NewTensor(y.Graph(), y.Dtype(), y.Dims(), G.WithValue(r), G.WithName("R"))
	c, err := G.Sum(G.Must(G.HadamardProd(y, rn)))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func maxDiff(a, b []float64) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	m := 0.0
	for i := range a {
		m = math.Max(m, math.Abs(a[i]-b[i]))
	}
	return m
}

// fillInput32 fills a float32 graph's input with a fixed ramp in [-1, 1].
func fillInput32(g *Graph) {
	x := g.Input.Value().Data().([]float32)
	for j := range x {
		x[j] = float32(j%17)/8 - 1
	}
}
