// Command recipe_ablation switches the standard ViT training remedies
// (warmup, zero-init head, gradient clipping, drop path) off one at a time,
// and Mixup/CutMix on, against the patch-4 MNIST recipe (configs/mnist_vit_tiny_p4.yaml), at the recipe's
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
	"image/color"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/vitgo/vit/experiments/internal/harness"
	"github.com/vitgo/vit/internal/plotfile"
	"github.com/vitgo/vit/train"
)

//go:embed readme.md.tmpl
var readme string

const recipe = "configs/mnist_vit_tiny_p4.yaml"

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
		return plotBars(r.Cells, filepath.Join(dir, "recipe_ablation.png"))
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

// summary is a cell's finite runs: mean and sample std of top-1, the worst
// and best (NaN when every run diverged); how many diverged (NaN) and how
// many finite runs ended at or below 20 % top-1 (chance is 10 %: diverged
// without a NaN).
type summary struct {
	Mean, Std, Worst, Best float64
	Finite, NaN, Collapsed int
}

// Summary summarises the cell's runs.
func (c *cell) Summary() summary {
	var xs []float64
	var s summary
	for _, o := range c.Runs {
		switch {
		case o.NaN:
			s.NaN++
		case o.Top1 <= 0.2:
			s.Collapsed++
			fallthrough
		default:
			xs = append(xs, o.Top1)
		}
	}
	if s.Finite = len(xs); s.Finite == 0 {
		s.Mean, s.Std, s.Worst, s.Best = math.NaN(), math.NaN(), math.NaN(), math.NaN()
		return s
	}
	if s.Mean, s.Std = stat.MeanStdDev(xs, nil); len(xs) == 1 {
		s.Std = 0
	}
	s.Worst, s.Best = slices.Min(xs), slices.Max(xs)
	return s
}

// Runs is the number of runs.
func (r results) Runs() int { return len(r.Cells) * r.Seeds }

// variant is one recipe change against configs/mnist_vit_tiny_p4.yaml, as
// config overrides.
type variant struct {
	Name      string
	Change    string   // what differs from the default recipe, for the table
	Overrides []string // -set key=value pairs
}

// variants are the default recipe, each remedy switched off in turn, all of
// them off at once, and Mixup/CutMix switched on (the default has it off).
var variants = []variant{
	{"default", "the recipe as in configs/mnist_vit_tiny_p4.yaml", nil},
	{"no_warmup", "optim.warmup_epochs → 0", []string{"optim.warmup_epochs=0"}},
	{"no_zero_init_head", "model.zero_init_head true → false (head trunc-normal .02)", []string{"model.zero_init_head=false"}},
	{"no_clip", "optim.clip_grad 1.0 → 0 (off)", []string{"optim.clip_grad=0"}},
	{"no_drop_path", "model.drop_path_rate 0.05 → 0", []string{"model.drop_path_rate=0"}},
	{"no_remedies", "all four above off at once", []string{"optim.warmup_epochs=0", "model.zero_init_head=false", "optim.clip_grad=0", "model.drop_path_rate=0"}},
	{"mixup_cutmix_on", "ON: mixup.mixup_alpha 0 → 0.8, mixup.cutmix_alpha 0 → 1.0 (DeiT)", []string{"mixup.mixup_alpha=0.8", "mixup.cutmix_alpha=1.0"}},
}

// pickVariants returns the named variants in table order ("all" = every one).
func pickVariants(list string) ([]variant, error) {
	if list == "all" {
		return variants, nil
	}
	names := strings.Split(list, ",")
	for i, n := range names {
		names[i] = strings.TrimSpace(n)
		if !slices.ContainsFunc(variants, func(v variant) bool { return v.Name == names[i] }) {
			return nil, fmt.Errorf("-variants: unknown variant %q", names[i])
		}
	}
	return slices.DeleteFunc(slices.Clone(variants), func(v variant) bool { return !slices.Contains(names, v.Name) }), nil
}

// plotBars draws one group of bars per variant, one bar per learning-rate
// multiplier: mean final top-1 over the finite runs, whiskers from the
// worst to the best run, and the count of non-finite runs written above.
// The cells are a grid, as measure appends them: for each multiplier, the
// variants in order.
func plotBars(cells []*cell, path string) error {
	nv := 0 // variants
	for nv < len(cells) && cells[nv].LRMult == cells[0].LRMult {
		nv++
	}
	if nv == 0 || len(cells)%nv != 0 {
		return fmt.Errorf("plot: %d cells are not a grid of learning rates × %d variants", len(cells), nv)
	}
	colors := []color.Color{color.RGBA{31, 119, 180, 255}, color.RGBA{255, 127, 14, 255},
		color.RGBA{44, 160, 44, 255}, color.RGBA{148, 103, 189, 255}}
	pl := plot.New()
	pl.Title.Text = "Recipe ablation: final validation top-1 (bars: mean of finite runs; whiskers: worst…best run)"
	pl.Y.Label.Text = "val top-1 (%)"
	pl.Y.Min, pl.Y.Max = 0, 112
	pl.Add(plotter.NewGrid())
	w := vg.Points(16)
	var labels plotter.XYLabels
	const group = 0.3 // data units between the bars of one variant
	for k := range len(cells) / nv {
		mult := cells[k*nv].LRMult
		shift := (float64(k) - float64(len(cells)/nv-1)/2) * group
		vals := make(plotter.Values, nv)
		var errs plotter.XYs
		var lows, highs []float64
		for i, c := range cells[k*nv : (k+1)*nv] {
			sm := c.Summary()
			mean, lo, hi, nan := sm.Mean, sm.Worst, sm.Best, sm.NaN
			if sm.Finite == 0 {
				mean, lo, hi = 0, 0, 0
			}
			vals[i] = 100 * mean
			x := float64(i) + shift
			errs = append(errs, plotter.XY{X: x, Y: 100 * mean})
			lows, highs = append(lows, 100*(mean-lo)), append(highs, 100*(hi-mean))
			if nan > 0 {
				labels.XYs = append(labels.XYs, plotter.XY{X: x, Y: 100*mean + 4})
				labels.Labels = append(labels.Labels, fmt.Sprintf("%d NaN", nan))
			}
		}
		bars, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return fmt.Errorf("plot: %w", err)
		}
		bars.Color = colors[k%len(colors)]
		bars.LineStyle.Width = 0
		bars.XMin = shift
		pl.Add(bars)
		pl.Legend.Add(fmt.Sprintf("lr ×%g", mult), bars)
		yerr := make(plotter.YErrors, len(lows))
		for i := range lows {
			yerr[i].Low, yerr[i].High = lows[i], highs[i]
		}
		eb, err := plotter.NewYErrorBars(struct {
			plotter.XYer
			plotter.YErrorer
		}{errs, yerr})
		if err != nil {
			return fmt.Errorf("plot: %w", err)
		}
		pl.Add(eb)
	}
	if len(labels.Labels) > 0 {
		if err := harness.Labels(pl, labels, vg.Point{}, func(s *text.Style) {
			s.Color, s.XAlign = color.RGBA{200, 0, 0, 255}, draw.XCenter
		}); err != nil {
			return fmt.Errorf("plot: %w", err)
		}
	}
	var names []string
	for _, c := range cells[:nv] {
		names = append(names, c.V.Name)
	}
	pl.NominalX(names...)
	pl.X.Min, pl.X.Max = -0.7, float64(nv)-0.3
	pl.Legend.Top = true
	pl.Legend.Left = true
	return plotfile.SavePlot(path, pl, 26*vg.Centimeter, 12*vg.Centimeter)
}
