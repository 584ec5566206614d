// Package report holds the small pieces the experiments' READMEs and plots
// share: wall-time rounding, a checkpoint's provenance line, and a log-axis
// ticker.
package report

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"gonum.org/v1/plot"
)

// RoundWall prints a wall time to the second, or to 0.1 s under 10 s.
func RoundWall(d time.Duration) string {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// Provenance names the training config saved next to a checkpoint, if any,
// as a sentence for a README ("" when there is none).
func Provenance(ckpt string) string {
	cfg := filepath.Join(filepath.Dir(ckpt), "config.yaml")
	if _, err := os.Stat(cfg); err != nil {
		return ""
	}
	return fmt.Sprintf(" Its training run's resolved config is `%s`.", cfg)
}

// Decades is a log-axis ticker: every power of ten is marked, every third
// one labelled 1e±k.
type Decades struct{}

// Ticks implements plot.Ticker.
func (Decades) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for e := int(math.Floor(math.Log10(lo))); e <= int(math.Ceil(math.Log10(hi))); e++ {
		t := plot.Tick{Value: math.Pow(10, float64(e))}
		if e%3 == 0 {
			t.Label = fmt.Sprintf("1e%d", e)
		}
		ts = append(ts, t)
	}
	return ts
}

// CommandLine is `go run ./experiments/NAME` with the flags of the default
// flag set that were set on the command line, except -out: where the report
// goes changes no number in it.
func CommandLine(name string) string {
	s := "go run ./experiments/" + name
	flag.Visit(func(f *flag.Flag) {
		if f.Name != "out" {
			s += fmt.Sprintf(" -%s %s", f.Name, f.Value)
		}
	})
	return s
}
