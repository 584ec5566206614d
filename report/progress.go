package report

import (
	"fmt"
	"io"
	"os"
	"time"
)

// ProgressWriter draws a one-line progress bar (epoch, step, loss, lr,
// img/s, the epoch's ETA and the whole run's) on a terminal, redrawn at most
// every 200 ms.
type ProgressWriter struct {
	w                    io.Writer
	last                 time.Time
	epoch                int
	epochStart, runStart time.Time
	epochFrom, runFrom   int // the steps done when this epoch's, this run's measuring began
}

// Progress is what the bar shows after a step.
type Progress struct {
	Epoch, Epochs            int // the current epoch, 1-based as in the logs and metrics.csv, of Epochs
	EpochStep, StepsPerEpoch int // steps of the epoch done, of StepsPerEpoch
	Step, Steps              int // steps of the run done, of Steps (train.max_steps if it stops earlier)
	Loss, LR, ImgPerS        float64
}

// NewProgress returns a progress bar on w, or nil when w is not a person's
// terminal, so that piped output stays quiet: when w is not a terminal, or
// when an MPI launcher started the process (mpirun gives each rank a pty
// of its own and copies it into its own stdout, a file or pipe as often
// as not).
func NewProgress(w *os.File) *ProgressWriter {
	fi, err := w.Stat()
	if !showProgress(err == nil && fi.Mode()&os.ModeCharDevice != 0, os.Getenv) {
		return nil
	}
	return &ProgressWriter{w: w}
}

// LauncherVars are the environment variables by which MPI launchers (Open
// MPI's mpirun, MPICH's Hydra, PMIx launchers such as srun --mpi=pmix)
// mark the processes they start.
var LauncherVars = []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}

// showProgress decides whether to draw the bar on a stdout that is (or is
// not) a terminal, in an environment read by getenv.
func showProgress(terminal bool, getenv func(string) string) bool {
	if !terminal {
		return false
	}
	for _, v := range LauncherVars {
		if getenv(v) != "" {
			return false
		}
	}
	return true
}

// NewProgressWriter returns a progress bar on w, terminal or not.
func NewProgressWriter(w io.Writer) *ProgressWriter { return &ProgressWriter{w: w} }

// Update redraws the bar after a step.
func (p *ProgressWriter) Update(s Progress) {
	now := time.Now()
	if p.runStart.IsZero() {
		p.runStart, p.runFrom = now, s.Step-1
	}
	if p.epochStart.IsZero() || s.Epoch != p.epoch {
		p.epochStart, p.epoch, p.epochFrom = now, s.Epoch, s.EpochStep-1
	}
	if now.Sub(p.last) < 200*time.Millisecond && s.EpochStep != s.StepsPerEpoch {
		return
	}
	p.last = now
	fmt.Fprint(p.w, "\r"+s.line(eta(now.Sub(p.epochStart), s.EpochStep-p.epochFrom, s.StepsPerEpoch-s.EpochStep),
		eta(now.Sub(p.runStart), s.Step-p.runFrom, s.Steps-s.Step)))
}

// line is the bar's text.
func (s Progress) line(epochETA, runETA string) string {
	const width = 24
	done := width * s.EpochStep / max(s.StepsPerEpoch, 1)
	bar := make([]byte, width)
	for i := range bar {
		bar[i] = '.'
		if i < done {
			bar[i] = '='
		}
	}
	return fmt.Sprintf("epoch %d/%d [%s] %d/%d loss %.4f lr %.2e %.0f img/s ETA %s (run %s) ",
		s.Epoch, s.Epochs, bar, s.EpochStep, s.StepsPerEpoch, s.Loss, s.LR, s.ImgPerS, epochETA, runETA)
}

// eta extrapolates the time left from n steps taken in d.
func eta(d time.Duration, n, left int) string {
	if n <= 0 {
		return "?"
	}
	return time.Duration(float64(d) / float64(n) * float64(max(left, 0))).Round(time.Second).String()
}

// Done ends the bar's line.
func (p *ProgressWriter) Done() { fmt.Fprintln(p.w) }
