// Command recipe_ablation switches the standard ViT training remedies
// (warmup, zero-init head, gradient clipping, drop path) off one at a time,
// and Mixup/CutMix on, against the default MNIST recipe, at the recipe's
// learning rate and at a multiple of it where the remedies matter more. Every
// variant runs with the same seeds and budget; the table gives the final
// validation top-1 and how many runs stopped on a non-finite loss.
//
//	go run ./experiments/recipe_ablation [-seeds 2] [-lr-mults 1,5] [-limit-train 0] [-epochs 2] [-limit-val 0]
package main

import (
	_ "embed"
	"flag"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat"

	"github.com/vitgo/vit/experiments/internal/harness"
	"github.com/vitgo/vit/train"
)

//go:embed readme.md.tmpl
var readme string

const recipe = "configs/mnist_vit_tiny.yaml"

// flags are the experiment's own flags.
var flags struct {
	seeds    int
	lrMults  string
	variants string
	warmup   float64
}

var experiment = harness.Experiment[results]{
	Name:   "recipe_ablation",
	Readme: readme,
	Budget: &harness.Budget{Epochs: 2},
	Flags: func(fs *flag.FlagSet) {
		fs.IntVar(&flags.seeds, "seeds", 2, "seeds per variant: 0…seeds−1")
		fs.StringVar(&flags.lrMults, "lr-mults", "1,5", "learning-rate multipliers of the recipe's optim.lr, comma-separated")
		fs.StringVar(&flags.variants, "variants", "all", "comma-separated variants to run, or all")
		fs.Float64Var(&flags.warmup, "warmup-epochs", 0.2, "the recipe's warmup for these short runs (its own 1 epoch of 20 would be half of a 2-epoch run)")
	},
	Measure: measure,
	Plot: func(r results, dir string) error {
		mults, vs := r.axes()
		return plotBars(r.Cells, mults, vs, filepath.Join(dir, "recipe_ablation.png"))
	},
}

func main() { harness.Main(experiment) }

// results are every cell of the table and what the prose quotes.
type results struct {
	Seeds    int
	BaseLR   float64
	Warmup   float64 // optim.warmup_epochs as run
	Budget   harness.Budget
	ReadBack int // runs an earlier invocation had finished
	Cells    []*cell
}

// outcome is one run's end.
type outcome struct {
	Top1, Loss float64
	NaN        bool `json:",omitempty"` // stopped by a non-finite loss, gradient or weight
	NaNStep    int  `json:",omitempty"` // the step it stopped at
}

// cell is one (learning rate, variant) pair over the seeds.
type cell struct {
	LRMult float64
	LR     float64
	V      variant
	Runs   []outcome
}

func measure(e *harness.Env) (results, error) {
	if flags.seeds < 1 {
		return results{}, fmt.Errorf("-seeds: must be ≥ 1, got %d", flags.seeds)
	}
	var mults []float64
	for _, s := range strings.Split(flags.lrMults, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || !(v > 0) {
			return results{}, fmt.Errorf("-lr-mults: %q is not a positive number", s)
		}
		mults = append(mults, v)
	}
	vs, err := pickVariants(flags.variants)
	if err != nil {
		return results{}, err
	}
	b := e.Budget
	base, err := train.LoadConfig(recipe, b.Sets)
	if err != nil {
		return results{}, err
	}
	res := results{Seeds: flags.seeds, BaseLR: base.Optim.LR, Warmup: flags.warmup, Budget: b}
	for _, mult := range mults {
		for _, v := range vs {
			c := &cell{LRMult: mult, LR: base.Optim.LR * mult, V: v}
			for seed := 0; seed < flags.seeds; seed++ {
				dir := filepath.Join(e.Runs, fmt.Sprintf("lr_x%g", mult), v.Name, fmt.Sprintf("seed%d", seed))
				extra := append([]string{
					fmt.Sprintf("train.seed=%d", seed),
					fmt.Sprintf("train.eval_every=%d", b.Epochs), // evaluated once, at the end
					fmt.Sprintf("optim.lr=%g", c.LR),
					fmt.Sprintf("optim.warmup_epochs=%g", flags.warmup),
					"checkpoint.save_best=false", // no model is read back; last.* are written anyway
				}, v.Overrides...)
				r, err := e.Train(recipe, b.Overrides(dir, extra...)...)
				if err != nil {
					return res, fmt.Errorf("lr ×%g %s seed %d: %w", mult, v.Name, seed, err)
				}
				if r.ReadBack {
					res.ReadBack++
				}
				c.Runs = append(c.Runs, outcome{Top1: r.Top1, Loss: r.Loss, NaN: r.NonFinite, NaNStep: r.NonFiniteStep})
			}
			res.Cells = append(res.Cells, c)
		}
	}
	return res, nil
}

// stats summarises the finite runs of a cell: mean and sample std of top-1,
// and the minimum; NaN when every run diverged.
func (c *cell) stats() (mean, std, lo float64, nan int) {
	var xs []float64
	for _, o := range c.Runs {
		if o.NaN {
			nan++
		} else {
			xs = append(xs, o.Top1)
		}
	}
	if len(xs) == 0 {
		return math.NaN(), math.NaN(), math.NaN(), nan
	}
	if mean, std = stat.MeanStdDev(xs, nil); len(xs) == 1 {
		std = 0
	}
	return mean, std, slices.Min(xs), nan
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

// Table renders one row per (learning rate, variant).
func (r results) Table() string {
	t := harness.Table{Header: []string{"lr", "variant", "change", "val top-1 mean ± std (finite runs)", "worst", "non-finite runs",
		"≤ 20 % (collapsed or on the plateau)"}, Align: "lllrrrr"}
	for _, c := range r.Cells {
		mean, std, lo, nan := c.stats()
		acc, worst := "—", "—"
		if !math.IsNaN(mean) {
			acc = fmt.Sprintf("%.2f ± %.2f %%", 100*mean, 100*std)
			worst = fmt.Sprintf("%.2f %%", 100*lo)
		}
		t.Row(fmt.Sprintf("%g (×%g)", c.LR, c.LRMult), c.V.Name, c.V.Change, acc, worst, fmt.Sprintf("%d / %d", nan, len(c.Runs)), c.collapsed())
	}
	return t.String()
}

// Runs is the number of runs.
func (r results) Runs() int { return len(r.Cells) * r.Seeds }

// axes returns the learning-rate multipliers and variants of the cells in
// the order they first appear.
func (r results) axes() ([]float64, []variant) {
	var mults []float64
	var vs []variant
	seenM, seenV := map[float64]bool{}, map[string]bool{}
	for _, c := range r.Cells {
		if !seenM[c.LRMult] {
			seenM[c.LRMult] = true
			mults = append(mults, c.LRMult)
		}
		if !seenV[c.V.Name] {
			seenV[c.V.Name] = true
			vs = append(vs, c.V)
		}
	}
	return mults, vs
}
