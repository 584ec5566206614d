package classify

import (
	"context"
	"math"

	"github.com/vitgo/vit/graph/kernels"
)

// SamePredictions is samePredictions, for the external tests.
var SamePredictions = samePredictions

// samePredictions reports whether two answers for the same image agree,
// one computed alone and one in a batch (or as another row of the same
// batch): bit for bit where the SGEMM is split-invariant (the native
// kernels, kernels.SplitInvariant), else the same classes in the same order
// with probabilities within 1e-6 (-tags openblas picks its blocking by
// shape).
func samePredictions(a, b []Prediction) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Class != b[i].Class || a[i].Label != b[i].Label {
			return false
		}
		if kernels.SplitInvariant && a[i].Prob != b[i].Prob || math.Abs(a[i].Prob-b[i].Prob) > 1e-6 {
			return false
		}
	}
	return true
}

// SetDecodeStarts makes f hear of each decode as it starts (after its
// budget is taken), until the test ends.
func SetDecodeStarts(t interface{ Cleanup(func()) }, f func(ctx context.Context, name string)) {
	decodeStarts = f
	t.Cleanup(func() { decodeStarts = nil })
}
