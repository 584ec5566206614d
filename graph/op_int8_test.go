package graph

import (
	"errors"
	"math"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/graph/kernels"
)

// TestLinearPackedInt8: a weight packed WithPrecision(INT8) makes the
// packed Linear ops compute kernels.Int8Linear, then the residual and GELU
// as their float32 forms add them, bit for bit.
func TestLinearPackedInt8(t *testing.T) {
	const m, n, k = 197, 40, 48
	g := G.NewGraph()
	x := randNode(g, tensor.Float32, "x", 1, 1, m, k)
	w := randNode(g, tensor.Float32, "w", 0.2, 2, n, k)
	b := randNode(g, tensor.Float32, "b", 1, 3, n)
	r := randNode(g, tensor.Float32, "r", 1, 4, m, n)
	pw, err := PackWeight(w.Value().(*tensor.Dense), WithPrecision(INT8))
	if err != nil {
		t.Fatal(err)
	}
	if pw.Precision() != INT8 {
		t.Fatalf("packed precision %s, want int8", pw.Precision())
	}
	plain, err := LinearPacked(x, pw, b)
	if err != nil {
		t.Fatal(err)
	}
	add, err := LinearPackedAdd(x, pw, b, r)
	if err != nil {
		t.Fatal(err)
	}
	gelu, err := LinearPackedGELU(x, pw, b, GELUExact)
	if err != nil {
		t.Fatal(err)
	}
	runOnce(t, g)
	want := make([]float32, m*n)
	kernels.Int8Linear(want, n, data[float32](x.Value().(*tensor.Dense)), k, m,
		kernels.QuantizeInt8(data[float32](w.Value().(*tensor.Dense)), n, k, k), data[float32](b.Value().(*tensor.Dense)))
	wantAdd := make([]float32, m*n)
	copy(wantAdd, want)
	kernels.Axpy(1, data[float32](r.Value().(*tensor.Dense)), wantAdd)
	wantGELU := make([]float32, m*n)
	kernels.GELU(wantGELU, want)
	for name, c := range map[string]struct {
		got  *G.Node
		want []float32
	}{"LinearPacked": {plain, want}, "LinearPackedAdd": {add, wantAdd}, "LinearPackedGELU": {gelu, wantGELU}} {
		got := data[float32](c.got.Value().(*tensor.Dense))
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(c.want[i]) {
				t.Fatalf("%s: y[%d] = %v, want %v", name, i, got[i], c.want[i])
			}
		}
	}
}

// TestInt8InferenceOnly: every op but the packed Linear refuses INT8, and
// PackWeight refuses it on float64 weights.
func TestInt8InferenceOnly(t *testing.T) {
	g := G.NewGraph()
	x := randNode(g, tensor.Float32, "x", 1, 1, 4, 6)
	w := randNode(g, tensor.Float32, "w", 1, 2, 3, 6)
	var pe *PrecisionError
	if _, err := Linear(x, w, nil, WithPrecision(INT8)); !errors.As(err, &pe) || pe.Precision != INT8 {
		t.Errorf("Linear with int8: %v, want a *PrecisionError", err)
	}
	w64 := randNode(g, tensor.Float64, "w64", 1, 2, 3, 6)
	if _, err := PackWeight(w64.Value().(*tensor.Dense), WithPrecision(INT8)); !errors.As(err, &pe) {
		t.Errorf("PackWeight of float64 with int8: %v, want a *PrecisionError", err)
	}
}
