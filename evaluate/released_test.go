package evaluate

import (
	"errors"
	"testing"

	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/layers"
)

// TestCheckpointEvaluatorInt8Releases: cmd/eval's int8 evaluator keeps the
// model's quantized weights only (the float32 copies released), and
// RunWith, which would swap float weights in, refuses it with a
// *layers.ReleasedError instead of a panic.
func TestCheckpointEvaluatorInt8Releases(t *testing.T) {
	for _, prec := range []graph.Precision{graph.FP32, graph.BF16, graph.INT8} {
		m := tinyModel(t)
		ev, err := checkpointEvaluator(m, 2, prec)
		if err != nil {
			t.Fatal(err)
		}
		defer ev.Close()
		var re *layers.ReleasedError
		err = m.CheckFloatWeights()
		if released := errors.As(err, &re); released != prec.IsInt8() {
			t.Errorf("%s: CheckFloatWeights %v, want a *layers.ReleasedError only for int8", prec, err)
		}
		if !prec.IsInt8() {
			continue
		}
		if _, err := ev.RunWith(t.Context(), nil, map[string][]float32{}); !errors.As(err, &re) {
			t.Errorf("RunWith on the int8 evaluator: %v, want a *layers.ReleasedError", err)
		}
	}
}
