// Package harness is what the experiments share, so that each keeps only
// its own measurement and plot: the common flags, training a run on a
// budget (or reading a finished one back), evaluating a model, and
// README.md rendered from the experiment's readme.md.tmpl with the numbers
// of its run (tables included: the template ranges over the results, with
// Funcs to format numbers), chart pieces, and for the benchmarks child
// processes and a training step on a random batch.
//
// An experiment is one Experiment value run by Main. Every run saves what
// it measured as results.json beside README.md; -render redraws the README
// and the figures from that file without measuring again, so the committed
// README is always what the template makes of the committed results.
package harness

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/sirupsen/logrus"
	"gonum.org/v1/plot"

	"github.com/vitgo/vit/internal/cliflag"
	"github.com/vitgo/vit/internal/regfile"
)

// Experiment is one experiment: its flags, its measurement and its plot.
// R is what it measured, everything its README and figures are drawn from.
type Experiment[R any] struct {
	Name   string  // the folder under experiments/
	Readme string  // the README's text/template (readme.md.tmpl, embedded)
	Budget *Budget // default training budget; nil = the experiment trains nothing
	// Load, with a Budget, adds -checkpoint: a trained model to use instead
	// of training one (see Env.TrainOrLoad).
	Load bool
	// Flags registers the experiment's own flags.
	Flags func(fs *flag.FlagSet)
	// Measure runs the experiment.
	Measure func(e *Env) (R, error)
	// Plot draws the figures into dir; nil = none.
	Plot func(r R, dir string) error
}

// Env is what Measure gets from the harness.
type Env struct {
	Budget Budget // the budget flags' values
	Dir    string // -dir: where README.md goes (and figures Measure draws itself)
	// Checkpoint is -checkpoint (Experiment.Load): a model to load instead of
	// training one.
	Checkpoint string
	Runs       string         // -runs: the folder training runs go to (git-ignored runs/ by default)
	Log        *logrus.Logger // progress, to stderr
}

// Report is what results.json holds and the README template sees: the
// command, its wall time and the experiment's results as R.
type Report[R any] struct {
	Command string
	Wall    string // rounded by RoundWall
	// Note, when set, says where the numbers come from if not from a run of
	// this code (e.g. transcribed from an earlier README); written by hand.
	Note string `json:",omitempty"`
	R    R
}

// ResultsFile and ReadmeFile are written into the experiment's folder.
const (
	ResultsFile = "results.json"
	ReadmeFile  = "README.md"
)

// Main runs x with the command line's arguments and exits non-zero on error.
func Main[R any](x Experiment[R]) {
	if err := x.Run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", x.Name, err)
		os.Exit(1)
	}
}

// Run parses args, measures (or, with -render, reads results.json back),
// and writes results.json, the figures and README.md into -dir.
func (x Experiment[R]) Run(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet(x.Name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", filepath.Join("experiments", x.Name), "where README.md, results.json and the figures are written")
	runs := fs.String("runs", filepath.Join("runs", "experiments", x.Name), "where training runs go")
	render := fs.Bool("render", false, "measure nothing: redraw README.md and the figures from -dir's results.json")
	env := &Env{Log: logrus.New()}
	env.Log.SetOutput(stderr)
	if x.Budget != nil {
		env.Budget.Flags(fs, *x.Budget)
	}
	if x.Load {
		fs.StringVar(&env.Checkpoint, "checkpoint", "", "a trained model (.safetensors) to use instead of training one")
	}
	if x.Flags != nil {
		x.Flags(fs)
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	env.Runs, env.Dir = *runs, *dir
	var rep Report[R]
	if *render {
		if err := readJSON(filepath.Join(*dir, ResultsFile), &rep); err != nil {
			return fmt.Errorf("-render: %w", err)
		}
	} else {
		start := time.Now()
		if err := os.MkdirAll(*dir, 0o755); err != nil {
			return err
		}
		r, err := x.Measure(env)
		if err != nil {
			return err
		}
		rep = Report[R]{Command: commandLine(x.Name, fs), Wall: RoundWall(time.Since(start)), R: r}
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if err := regfile.WriteFile(filepath.Join(*dir, ResultsFile), append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	if x.Plot != nil {
		if err := x.Plot(rep.R, *dir); err != nil {
			return fmt.Errorf("plot: %w", err)
		}
	}
	readme, err := x.render(rep)
	if err != nil {
		return err
	}
	path := filepath.Join(*dir, ReadmeFile)
	if err := regfile.WriteFile(path, readme, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "wrote %s\n", path)
	return nil
}

// TestReadme fails t unless dir's README.md is what the template makes of
// dir's results.json. Each experiment's test calls it on its own folder.
func (x Experiment[R]) TestReadme(t testing.TB, dir string) {
	t.Helper()
	got, committed, err := x.Rerender(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, committed) {
		t.Errorf("%s/README.md differs from the template's rendering of results.json (run with -render):\n%s", dir, got)
	}
}

// Rerender renders the README from dir's results.json and returns it with
// the README.md committed there: a test asserts they are equal.
func (x Experiment[R]) Rerender(dir string) (got, committed []byte, err error) {
	var rep Report[R]
	if err := readJSON(filepath.Join(dir, ResultsFile), &rep); err != nil {
		return nil, nil, err
	}
	if got, err = x.render(rep); err != nil {
		return nil, nil, err
	}
	committed, err = regfile.ReadFile(filepath.Join(dir, ReadmeFile))
	return got, committed, err
}

// ReadResults reads dir's results.json into rep: what a test of the
// committed record checks.
func ReadResults[R any](dir string, rep *Report[R]) error {
	return readJSON(filepath.Join(dir, ResultsFile), rep)
}

func readJSON(path string, v any) error {
	b, err := regfile.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// commandLine is `go run ./experiments/NAME` with the flags set on the
// command line, except those that only say where files go.
func commandLine(name string, fs *flag.FlagSet) string {
	s := "go run ./experiments/" + name
	fs.Visit(func(f *flag.Flag) {
		switch v := f.Value.(type) {
		case *Sets:
			for _, kv := range *v {
				s += " -" + f.Name + " " + kv
			}
		default:
			if f.Name == "dir" || f.Name == "runs" {
				return
			}
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
				s += fmt.Sprintf(" -%s=%s", f.Name, f.Value)
				return
			}
			s += fmt.Sprintf(" -%s %s", f.Name, f.Value)
		}
	})
	return s
}

// Sets is a repeatable key=value flag: config overrides applied last.
type Sets = cliflag.Strings

// Budget is the size of an experiment's training runs, as flags and as
// config overrides.
type Budget struct {
	LimitTrain int    // data.limit_train; 0 = the whole training set
	LimitVal   int    // data.limit_val; 0 = the whole validation set
	Epochs     int    // train.epochs
	MaxSteps   int    // train.max_steps; 0 = off
	Seed       uint64 // train.seed
	Sets       Sets   // -set key=value, applied after everything else
}

// Flags registers -limit-train, -limit-val, -epochs, -max-steps, -seed and
// -set on fs with def's values as defaults.
func (b *Budget) Flags(fs *flag.FlagSet, def Budget) {
	fs.IntVar(&b.LimitTrain, "limit-train", def.LimitTrain, "training images per run (data.limit_train; 0 = all)")
	fs.IntVar(&b.LimitVal, "limit-val", def.LimitVal, "validation images (data.limit_val; 0 = all)")
	fs.IntVar(&b.Epochs, "epochs", def.Epochs, "epochs per run (train.epochs)")
	fs.IntVar(&b.MaxSteps, "max-steps", def.MaxSteps, "stop each run after this many steps (train.max_steps; 0 = off)")
	fs.Uint64Var(&b.Seed, "seed", def.Seed, "seed (train.seed)")
	fs.Var(&b.Sets, "set", "extra config override for every run, key=value (repeatable)")
}

// Overrides returns the config overrides of a run into outDir: the budget,
// then extra, then the -set ones (so that those win).
func (b Budget) Overrides(outDir string, extra ...string) []string {
	o := []string{
		fmt.Sprintf("data.limit_train=%d", b.LimitTrain),
		fmt.Sprintf("data.limit_val=%d", b.LimitVal),
		fmt.Sprintf("train.epochs=%d", b.Epochs),
		fmt.Sprintf("train.max_steps=%d", b.MaxSteps),
		fmt.Sprintf("train.seed=%d", b.Seed),
		"train.out_dir=" + outDir,
	}
	o = append(o, extra...)
	return append(o, b.Sets...)
}

// render executes the README template with rep.
func (x Experiment[R]) render(rep Report[R]) ([]byte, error) {
	t, err := template.New(x.Name + "/readme.md.tmpl").Funcs(Funcs).Option("missingkey=error").Parse(x.Readme)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := t.Execute(&b, rep); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Funcs are the README templates' formatting functions.
var Funcs = template.FuncMap{
	"pct":  func(x float64) string { return fmt.Sprintf("%.2f", 100*x) }, // a fraction as a percentage, 2 decimals
	"x100": func(x float64) float64 { return 100 * x },
	"div":  func(a, b float64) float64 { return a / b },
	"sub":  func(a, b int) int { return a - b },
	"mul":  func(a, b int) int { return a * b },
	"seq": func(n int) []int { // 1, 2, …, n
		s := make([]int, n)
		for i := range s {
			s[i] = i + 1
		}
		return s
	},
	"commas": Commas,
	"join":   strings.Join, // a table row's cells: {{join . " | "}}
	"parts":  func() []string { return Parts },
	"mflop": func(f float64) string { // FLOPs as MFLOPs, three significant digits
		switch m := f / 1e6; {
		case m >= 100:
			return fmt.Sprintf("%.0f", m)
		case m >= 1:
			return fmt.Sprintf("%.3g", m)
		default:
			return fmt.Sprintf("%.2g", m)
		}
	},
}

// RoundWall prints a wall time to the second, or to 0.1 s under 10 s.
func RoundWall(d time.Duration) string {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// Commas groups an integer's digits by thousands.
func Commas(n int) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, ch := range s {
		if i > 0 && ch != '-' && s[i-1] != '-' && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(ch)
	}
	return b.String()
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

// Argmax is the first index of z's largest value (the predicted class of a
// row of logits; ties go to the first, as torch.argmax).
func Argmax(z []float32) int {
	best := 0
	for i, v := range z {
		if v > z[best] {
			best = i
		}
	}
	return best
}
