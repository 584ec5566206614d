package classify_test

import (
	"context"
	"errors"
	"testing"

	"github.com/vitgo/vit/classify"
	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/internal/enum"
)

// TestPrecision: Options.Precision bf16 classifies with bfloat16 products
// (the probabilities differ from fp32's), and an unknown precision is
// refused with an *enum.Error.
func TestPrecision(t *testing.T) {
	imgs := testImages(4)
	probs := map[graph.Precision][]float64{}
	for _, p := range []graph.Precision{graph.FP32, graph.BF16} {
		c := load(t, classify.Options{MaxBatch: 4, TopK: 3, Precision: p})
		preds, err := c.Classify(context.Background(), imgs)
		if err != nil {
			t.Fatal(err)
		}
		for _, ps := range preds {
			for _, q := range ps {
				probs[p] = append(probs[p], q.Prob)
			}
		}
	}
	same := true
	for i := range probs[graph.FP32] {
		same = same && probs[graph.FP32][i] == probs[graph.BF16][i]
	}
	if same {
		t.Error("bf16 probabilities equal fp32 ones")
	}
	_, err := classify.Load(tiny(t), classify.Options{Precision: "fp16"})
	var ee *enum.Error
	if !errors.As(err, &ee) {
		t.Errorf("precision fp16: %v, want an *enum.Error", err)
	}
}
