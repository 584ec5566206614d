package evaluate

import (
	"math"
	"testing"

	"github.com/vitgo/vit/graph"
)

// TestEvaluatorKeepsNoMaps: the evaluator Run and cmd/eval use keeps no
// attention maps (graph.AttentionProbs refuses its nodes) and gives the
// logits of the maps-keeping graph to float rounding; NewMaps's
// maps are readable.
func TestEvaluatorKeepsNoMaps(t *testing.T) {
	m := tinyModel(t)
	const n = 3
	c := m.Config
	x := make([]float32, n*c.InChans*c.ImgSize[0]*c.ImgSize[1])
	for i := range x {
		x[i] = float32(math.Sin(float64(i)*0.37)) * 2
	}
	run := func(ev *Evaluator, err error) []float32 {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(ev.Close)
		out, err := ev.Logits(x, n)
		if err != nil {
			t.Fatal(err)
		}
		return append([]float32(nil), out...)
	}
	plain, err := New(m, n)
	got := run(plain, err)
	maps, err := NewMaps(m, n)
	want := run(maps, err)
	for i := range want {
		if d := math.Abs(float64(got[i] - want[i])); d > 1e-5*(1+math.Abs(float64(want[i]))) {
			t.Fatalf("logit %d: %v without maps, %v with", i, got[i], want[i])
		}
	}
	if _, _, _, _, err := graph.AttentionProbs(plain.Graph().Attn[0]); err == nil {
		t.Error("NewEvaluator's graph kept attention maps")
	}
	if _, _, _, _, err := graph.AttentionProbs(maps.Graph().Attn[0]); err != nil {
		t.Errorf("NewMaps's maps: %v", err)
	}
}
