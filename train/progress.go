package train

import (
	"fmt"
	"io"
	"os"
	"time"
)

// ProgressWriter draws a one-line progress bar (step, loss, lr, img/s, ETA)
// on a terminal, redrawn at most every 200 ms.
type ProgressWriter struct {
	w           io.Writer
	last, start time.Time
	epoch, from int
}

// NewProgress returns a progress bar on w, or nil when w is not a terminal,
// so that piped output stays quiet.
func NewProgress(w *os.File) *ProgressWriter {
	fi, err := w.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	return &ProgressWriter{w: w}
}

// Update redraws the bar for step of total in epoch.
func (p *ProgressWriter) Update(epoch, step, total int, loss, lr, imgPerS float64) {
	if p.start.IsZero() || epoch != p.epoch {
		p.start, p.epoch, p.from = time.Now(), epoch, step-1
	}
	if time.Since(p.last) < 200*time.Millisecond && step != total {
		return
	}
	p.last = time.Now()
	const width = 24
	done := width * step / max(total, 1)
	bar := make([]byte, width)
	for i := range bar {
		bar[i] = '.'
		if i < done {
			bar[i] = '='
		}
	}
	eta := "?"
	if n := step - p.from; n > 0 {
		left := time.Duration(float64(time.Since(p.start)) / float64(n) * float64(total-step))
		eta = left.Round(time.Second).String()
	}
	fmt.Fprintf(p.w, "\repoch %d [%s] %d/%d loss %.4f lr %.2e %.0f img/s ETA %s ", epoch, bar, step, total, loss, lr, imgPerS, eta)
}

// Done ends the bar's line.
func (p *ProgressWriter) Done() { fmt.Fprintln(p.w) }
