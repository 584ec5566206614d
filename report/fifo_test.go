package report

import (
	"errors"
	"io/fs"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/vitgo/vit/internal/regfile"
)

// TestRecordsRefuseFIFO: every read, rewrite and append of metrics.csv and
// steps.csv refuses a named pipe by its type, naming the path, instead of
// blocking in its open (no writer, or no reader, ever comes); the pipe is
// left in place, not replaced by a fresh file.
func TestRecordsRefuseFIFO(t *testing.T) {
	dir := t.TempDir()
	metrics, steps := filepath.Join(dir, "metrics.csv"), filepath.Join(dir, StepsFile)
	for _, p := range []string{metrics, steps} {
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
	}
	ml, sl := &MetricsLog{Path: metrics}, &StepsLog{Path: steps}
	defer sl.Close()
	for _, tc := range []struct {
		name, path string
		op         func() error
	}{
		{"ReadMetrics", metrics, func() error { _, _, err := ReadMetrics(metrics); return err }},
		{"MetricsLog.Truncate", metrics, func() error { return ml.Truncate(3) }},
		{"MetricsLog.Append", metrics, func() error { return ml.Append(MetricsRow{Epoch: 1, Step: 4}) }},
		{"ReadSteps", steps, func() error { _, err := ReadSteps(steps); return err }},
		{"StepsLog.Resume", steps, func() error { return sl.Resume(3) }},
		{"StepsLog.Append", steps, func() error { return sl.Append(StepRow{Step: 4, Epoch: 1}) }},
	} {
		err := tc.op()
		var nr *regfile.NotRegularError
		if !errors.As(err, &nr) || nr.Path != tc.path || nr.Mode&fs.ModeNamedPipe == 0 {
			t.Errorf("%s on a FIFO: %v, want a *regfile.NotRegularError naming %s", tc.name, err, tc.path)
		}
		if err := regfile.Check(tc.path); err == nil {
			t.Errorf("%s on a FIFO replaced it with a regular file", tc.name)
		}
	}
}
