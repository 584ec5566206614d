// Command recipe_ablation switches the standard ViT training remedies
// (warmup, zero-init head, gradient clipping, drop path) off one at a time,
// and Mixup/CutMix on, against the default MNIST recipe, at the recipe's
// learning rate and at a multiple of it where the remedies matter more. Every
// variant runs with the same seeds and budget; the table gives the final
// validation top-1 and how many runs stopped on a non-finite loss.
//
//	go run ./experiments/recipe_ablation [-seeds 2] [-lr-mults 1,5] [-limit-train 2560] [-epochs 6] [-limit-val 2000]
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/vitgo/vit/experiments/internal/budget"
	"github.com/vitgo/vit/train"
)

// outcome is one run's end.
type outcome struct {
	Top1, Loss float64
	NaN        bool // stopped by a non-finite loss or gradient
	NaNStep    int
	ReadBack   bool `json:",omitempty"` // finished by an earlier invocation, read back
}

// cell is one (learning rate, variant) pair over the seeds.
type cell struct {
	LRMult float64
	LR     float64
	V      variant
	Runs   []outcome
}

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "recipe_ablation: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("recipe_ablation", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "configs/mnist_vit_tiny.yaml", "default recipe (YAML)")
	limitTrain := fs.Int("limit-train", 0, "training images per epoch (data.limit_train; 0 = all 60k)")
	limitVal := fs.Int("limit-val", 0, "validation images (data.limit_val; 0 = all 10k)")
	epochs := fs.Int("epochs", 2, "epochs per run (train.epochs); evaluated once, at the end")
	maxSteps := fs.Int("max-steps", 0, "stop each run after this many steps (train.max_steps; 0 = off)")
	warmup := fs.Float64("warmup-epochs", 0.2, "the recipe's warmup for these short runs (its own 1 epoch of 20 would be half of a 2-epoch run); < 0 keeps the config's")
	nSeeds := fs.Int("seeds", 2, "seeds per variant: 0…seeds−1")
	lrMults := fs.String("lr-mults", "1,5", "learning-rate multipliers of the recipe's optim.lr, comma-separated")
	names := fs.String("variants", "all", "comma-separated variants to run, or all")
	out := fs.String("out", "runs/experiments/recipe_ablation", "directory for the runs (metrics, checkpoints)")
	dir := fs.String("dir", "experiments/recipe_ablation", "where README.md and the PNG are written")
	noReadme := fs.Bool("no-readme", false, "print the table but do not rewrite README.md")
	replot := fs.Bool("replot", false, "train nothing: redraw the table, PNG and README from -out's results.json")
	var sets budget.Sets
	fs.Var(&sets, "set", "extra config override for every run, key=value (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return fmt.Errorf("-dir: %w", err)
	}
	if *nSeeds < 1 {
		return fmt.Errorf("-seeds: must be ≥ 1, got %d", *nSeeds)
	}
	var mults []float64
	for _, s := range strings.Split(*lrMults, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || !(v > 0) {
			return fmt.Errorf("-lr-mults: %q is not a positive number", s)
		}
		mults = append(mults, v)
	}
	vs, err := pickVariants(*names)
	if err != nil {
		return err
	}
	if *warmup >= 0 {
		sets = append(budget.Sets{fmt.Sprintf("optim.warmup_epochs=%g", *warmup)}, sets...)
	}
	base, err := train.LoadConfig(*cfgPath, sets)
	if err != nil {
		return err
	}
	cmd := "go run ./experiments/recipe_ablation"
	if len(args) > 0 {
		cmd += " " + strings.Join(args, " ")
	}
	resPath := filepath.Join(*out, "results.json")
	var res results
	if *replot {
		if res, err = loadResults(resPath); err != nil {
			return err
		}
	} else {
		start := time.Now()
		bud := runBudget{LimitTrain: *limitTrain, LimitVal: *limitVal, Epochs: *epochs, MaxSteps: *maxSteps}
		cells, err := trainAll(*cfgPath, base, sets, mults, vs, *nSeeds, bud, *out, stderr)
		if err != nil {
			return err
		}
		res = results{Command: cmd, Wall: time.Since(start), Seeds: *nSeeds, BaseLR: base.Optim.LR,
			Warmup: base.Optim.WarmupEpochs, Budget: bud, Cells: cells}
		if err := saveResults(resPath, res); err != nil {
			return err
		}
	}
	cells := res.Cells
	for _, c := range cells { // the current wording of each variant's change
		for _, v := range variants {
			if v.Name == c.V.Name {
				c.V.Change = v.Change
			}
		}
	}
	mults, vs = axes(cells)
	table := formatTable(cells)
	fmt.Fprint(stdout, table)
	png := filepath.Join(*dir, "recipe_ablation.png")
	if err := plotBars(cells, mults, vs, png); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s\n", png)
	if *noReadme {
		return nil
	}
	readme := filepath.Join(*dir, "README.md")
	if err := writeReadme(readme, res, table); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s\n", readme)
	return nil
}

// nanStep reads the step out of train.Run's "step N: … non-finite …" error.
func nanStep(err error) int {
	msg := err.Error()
	for e := err; e != nil; e = errors.Unwrap(e) {
		msg = e.Error()
	}
	if s, ok := strings.CutPrefix(msg, "step "); ok {
		if n, _, ok := strings.Cut(s, ":"); ok {
			if v, err := strconv.Atoi(n); err == nil {
				return v
			}
		}
	}
	return -1
}

// stats summarises the finite runs of a cell: mean and sample std of top-1,
// and the minimum; NaN when every run diverged.
func (c *cell) stats() (mean, std, lo float64, nan int) {
	var xs []float64
	for _, o := range c.Runs {
		if o.NaN {
			nan++
			continue
		}
		xs = append(xs, o.Top1)
	}
	if len(xs) == 0 {
		return math.NaN(), math.NaN(), math.NaN(), nan
	}
	sort.Float64s(xs)
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) > 1 {
		for _, x := range xs {
			std += (x - mean) * (x - mean)
		}
		std = math.Sqrt(std / float64(len(xs)-1))
	}
	return mean, std, xs[0], nan
}

// collapsed counts finite runs that ended at or below 20 % top-1 (chance is
// 10 %): diverged without a NaN.
func (c *cell) collapsed() int {
	n := 0
	for _, o := range c.Runs {
		if !o.NaN && o.Top1 <= 0.2 {
			n++
		}
	}
	return n
}

// formatTable renders one row per (learning rate, variant).
func formatTable(cells []*cell) string {
	var b strings.Builder
	b.WriteString("| lr | variant | change | val top-1 mean ± std (finite runs) | worst | non-finite runs | ≤ 20 % (collapsed or on the plateau) |\n")
	b.WriteString("|---|---|---|---:|---:|---:|---:|\n")
	for _, c := range cells {
		mean, std, lo, nan := c.stats()
		acc, worst := "—", "—"
		if !math.IsNaN(mean) {
			acc = fmt.Sprintf("%.2f ± %.2f %%", 100*mean, 100*std)
			worst = fmt.Sprintf("%.2f %%", 100*lo)
		}
		fmt.Fprintf(&b, "| %g (×%g) | %s | %s | %s | %s | %d / %d | %d |\n", c.LR, c.LRMult, c.V.Name, c.V.Change,
			acc, worst, nan, len(c.Runs), c.collapsed())
	}
	return b.String()
}

// budget is each run's length.
// runBudget is what every run gets (0 = the whole set, or off).
type runBudget struct{ LimitTrain, LimitVal, Epochs, MaxSteps int }

// trainAll runs every (learning rate, variant, seed) one after another and
// returns the cells in table order. A run that stops on a non-finite loss
// is recorded; any other error ends the experiment.
func trainAll(cfgPath string, base train.Config, sets []string, mults []float64, vs []variant, nSeeds int, bud runBudget, out string, stderr io.Writer) ([]*cell, error) {
	log := logrus.New()
	log.SetOutput(stderr)
	log.SetLevel(logrus.WarnLevel) // one line per run from here instead of one per epoch

	var cells []*cell
	total, done := len(mults)*len(vs)*nSeeds, 0
	for _, mult := range mults {
		for _, v := range vs {
			c := &cell{LRMult: mult, LR: base.Optim.LR * mult, V: v}
			for seed := 0; seed < nSeeds; seed++ {
				outDir := filepath.Join(out, fmt.Sprintf("lr_x%g", mult), v.Name, fmt.Sprintf("seed%d", seed))
				overrides := append(append([]string{}, sets...),
					fmt.Sprintf("data.limit_train=%d", bud.LimitTrain),
					fmt.Sprintf("data.limit_val=%d", bud.LimitVal),
					fmt.Sprintf("train.epochs=%d", bud.Epochs),
					fmt.Sprintf("train.eval_every=%d", bud.Epochs),
					fmt.Sprintf("train.max_steps=%d", bud.MaxSteps),
					fmt.Sprintf("train.seed=%d", seed),
					fmt.Sprintf("optim.lr=%g", c.LR),
					"checkpoint.save_best=false", // no model is read back; last.* are written anyway
					"train.out_dir="+outDir)
				overrides = append(overrides, v.Overrides...)
				cfg, err := train.LoadConfig(cfgPath, overrides)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", v.Name, err)
				}
				t0 := time.Now()
				if o, ok := finished(cfg); ok { // an earlier invocation ran exactly this
					c.Runs = append(c.Runs, o)
					done++
					fmt.Fprintf(stderr, "[%d/%d] lr ×%g %-18s seed %d: top-1 %.2f %% (read back from %s)\n", done, total, mult, v.Name, seed,
						100*o.Top1, outDir)
					continue
				}
				res, err := train.Run(context.Background(), cfg, train.Options{Log: log})
				var o outcome
				switch {
				case err == nil:
					o = outcome{Top1: res.Last.Top1, Loss: res.Last.Loss}
				case strings.Contains(err.Error(), "non-finite"):
					o = outcome{NaN: true, NaNStep: nanStep(err)}
				default:
					return nil, fmt.Errorf("lr ×%g %s seed %d: %w", mult, v.Name, seed, err)
				}
				c.Runs = append(c.Runs, o)
				done++
				status := fmt.Sprintf("top-1 %.2f %%", 100*o.Top1)
				if o.NaN {
					status = fmt.Sprintf("non-finite at step %d", o.NaNStep)
				}
				fmt.Fprintf(stderr, "[%d/%d] lr ×%g %-18s seed %d: %s (%s)\n", done, total, mult, v.Name, seed, status,
					time.Since(t0).Round(time.Second))
			}
			cells = append(cells, c)
		}
	}

	return cells, nil
}

// finished returns the outcome of a run that an earlier invocation already
// took to its end in cfg's output directory with the same resolved config,
// so that adding seeds (or rerunning after an interruption) trains only
// what is missing.
func finished(cfg train.Config) (outcome, bool) {
	dir := cfg.Train.OutDir
	want, err := cfg.YAML()
	if err != nil {
		return outcome{}, false
	}
	if got, err := os.ReadFile(filepath.Join(dir, train.ConfigFile)); err != nil || !bytes.Equal(got, want) {
		return outcome{}, false
	}
	header, rows, err := train.ReadMetrics(filepath.Join(dir, train.MetricsFile))
	if err != nil || len(rows) == 0 {
		return outcome{}, false
	}
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	last := rows[len(rows)-1]
	num := func(name string) float64 {
		i, ok := col[name]
		if !ok || i >= len(last) {
			return math.NaN()
		}
		v, err := strconv.ParseFloat(last[i], 64)
		if err != nil {
			return math.NaN()
		}
		return v
	}
	epoch, step, top1, loss := num("epoch"), num("step"), num("val_top1"), num("val_loss")
	end := int(epoch) == cfg.Train.Epochs || (cfg.Train.MaxSteps > 0 && int(step) >= cfg.Train.MaxSteps)
	if !end || math.IsNaN(top1) || math.IsNaN(loss) {
		return outcome{}, false
	}
	return outcome{Top1: top1, Loss: loss, ReadBack: true}, true
}
