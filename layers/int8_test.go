package layers

import (
	"math"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/graph"
)

// TestFrozenInt8: an int8 Frozen graph quantizes the packed Linear weights
// but the head's, keeps every other product float32, and its logits stay
// close to float32's (cosine similarity ≥ 0.999 on a random model); int8
// outside a Frozen graph is refused.
func TestFrozenInt8(t *testing.T) {
	c := tinyConfig()
	c.ImgSize, c.PatchSize, c.EmbedDim, c.NumHeads, c.Depth, c.NumClasses = Size2{16, 16}, 4, 64, 2, 3, 10
	m, err := New(c, tensor.Float32, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range m.Params {
		InitTruncNormal(p.Value, 0.1, randFor(p.Name))
	}
	if _, err := m.Build(4, BuildOptions{Precision: graph.INT8}); err == nil || !strings.Contains(err.Error(), "Frozen") {
		t.Errorf("a plain int8 graph: %v, want a refusal naming Frozen", err)
	}
	var out [2][]float32
	for i, prec := range []graph.Precision{graph.FP32, graph.INT8} {
		g, err := m.Build(4, BuildOptions{Frozen: true, Precision: prec})
		if err != nil {
			t.Fatal(err)
		}
		fillInput32(g)
		runGraph(t, g.G)
		out[i] = append([]float32(nil), g.Logits.Value().Data().([]float32)...)
	}
	var dot, n0, n1 float64
	same := true
	for j := range out[0] {
		a, b := float64(out[0][j]), float64(out[1][j])
		dot, n0, n1 = dot+a*b, n0+a*a, n1+b*b
		same = same && a == b
	}
	cos := dot / math.Sqrt(n0*n1)
	t.Logf("cosine %.6f", cos)
	if cos < 0.999 || same {
		t.Errorf("int8 logits: cosine %v to float32's (identical %v), want ≥ 0.999 and not identical", cos, same)
	}
	fz, err := m.frozenWeights(graph.INT8)
	if err != nil {
		t.Fatal(err)
	}
	for name, w := range fz {
		want := graph.INT8
		if m.Param(name).spec.group == groupHead {
			want = graph.FP32
		}
		if w.Precision() != want {
			t.Errorf("%s packed in %s, want %s", name, w.Precision(), want)
		}
	}
}
