package report

import (
	"bytes"
	"strings"
	"testing"
)

// TestProgressLine: the bar counts epochs 1-based of all epochs, as the logs
// and metrics.csv do, and shows the epoch's ETA beside the whole run's.
func TestProgressLine(t *testing.T) {
	var buf bytes.Buffer
	p := &ProgressWriter{w: &buf}
	p.Update(Progress{Epoch: 1, Epochs: 20, EpochStep: 1, StepsPerEpoch: 468, Step: 1, Steps: 9360, Loss: 2.3, LR: 1e-6, ImgPerS: 900})
	got := buf.String()
	for _, want := range []string{"\repoch 1/20 [", "] 1/468 loss 2.3000 lr 1.00e-06 900 img/s ETA ", " (run "} {
		if !strings.Contains(got, want) {
			t.Errorf("bar %q lacks %q", got, want)
		}
	}
	if got, want := eta(10e9, 2, 6), "30s"; got != want {
		t.Errorf("eta of 6 steps at 5 s each: %s, want %s", got, want)
	}
}
