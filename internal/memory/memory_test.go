package memory

import (
	"errors"
	"math"
	"testing"

	"github.com/vitgo/vit/internal/cfgerr"
)

// TestPartsEstimate: the parts round down to bytes, Peak sums every part
// but Attention (a share of the activations), and a part beyond any
// machine saturates instead of wrapping.
func TestPartsEstimate(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    Parts
		want Estimate
	}{
		{"sum", Parts{Params: 10.7, Grads: 10, Optimizer: 20, TrainAct: 5, EvalAct: 3, Attention: 4, Data: 1, Runtime: 2},
			Estimate{Params: 10, Grads: 10, Optimizer: 20, TrainAct: 5, EvalAct: 3, Attention: 4, Data: 1, Runtime: 2, Peak: 51}},
		{"saturated", Parts{TrainAct: 1e300},
			Estimate{TrainAct: math.MaxInt64 / 2, Peak: math.MaxInt64 / 2}},
	} {
		if got := tc.p.Estimate(); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// TestCheckNamesTheLargestPart: an estimate over the memory available is
// a *cfgerr.Error naming the key of its largest part, wrapping an *Error;
// one that fits, or an unknown amount available, passes.
func TestCheckNamesTheLargestPart(t *testing.T) {
	for _, tc := range []struct {
		e    Estimate
		have int64
		key  string // "" = passes
	}{
		{Estimate{TrainAct: 90, Params: 5, Peak: 100}, 50, "train.batch_size"},
		{Estimate{EvalAct: 90, Peak: 100}, 50, "train.eval_batch_size"},
		{Estimate{Data: 90, Peak: 100}, 50, "data.name"},
		{Estimate{Decode: 90, Peak: 100}, 50, "data.workers"},
		{Estimate{Params: 60, Grads: 30, Peak: 100}, 50, "model.embed_dim"},
		{Estimate{TrainAct: 90, Peak: 100}, 100, ""},
		{Estimate{TrainAct: 90, Peak: 100}, 0, ""},
	} {
		err := Check(tc.e, tc.have, "test")
		var ce *cfgerr.Error
		var me *Error
		switch {
		case tc.key == "" && err != nil:
			t.Errorf("%+v in %d: %v, want a pass", tc.e, tc.have, err)
		case tc.key == "":
		case !errors.As(err, &ce) || ce.Key != tc.key || !errors.As(err, &me) || me.Need != tc.e.Peak:
			t.Errorf("%+v in %d: %v, want a *cfgerr.Error naming %s", tc.e, tc.have, err, tc.key)
		}
	}
}
