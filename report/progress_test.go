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

// TestNoProgressUnderALauncher: the bar is drawn on a terminal only, and
// not under an MPI launcher even there (each rank's stdout is a pty that
// mpirun copies into its own, often redirected, output).
func TestNoProgressUnderALauncher(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if !showProgress(true, env(nil)) {
		t.Fatal("no bar on a terminal")
	}
	if showProgress(false, env(nil)) {
		t.Fatal("a bar on a pipe")
	}
	for _, v := range LauncherVars {
		if showProgress(true, env(map[string]string{v: "2"})) {
			t.Errorf("a bar on a terminal under a launcher (%s set)", v)
		}
	}
}
