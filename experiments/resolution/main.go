// Command resolution trains the patch-4 MNIST ViT at 28×28
// (configs/mnist_vit_tiny_p4.yaml, a 7×7 grid) and evaluates it at larger input sizes with the position table
// carried over four ways — resampled bicubically (timm's default) or
// bilinearly, and two naive ways: repeated (nearest) and zero-padded — then
// fine-tunes it for one epoch at 56×56 (configs/mnist_finetune_56.yaml) and
// evaluates that too.
//
//	go run ./experiments/resolution
package main

import (
	_ "embed"
	"flag"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/checkpoint"
	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/evaluate"
	"github.com/vitgo/vit/experiments/internal/harness"
	"github.com/vitgo/vit/internal/plotfile"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/train"
)

//go:embed readme.md.tmpl
var readme string

// ftSize is the fine-tuning size of configs/mnist_finetune_56.yaml.
const ftSize = 56

var flags struct {
	checkpoint, ftCheckpoint string
	ft                       harness.Budget // epochs, limit_train, max_steps of the fine-tuning
	sizes                    string
	evalBatch                int
}

var experiment = harness.Experiment[results]{
	Name:   "resolution",
	Readme: readme,
	Budget: &harness.Budget{Epochs: 2},
	Flags: func(fs *flag.FlagSet) {
		fs.StringVar(&flags.checkpoint, "checkpoint", "", "a trained 28×28 model (.safetensors) to use instead of training one")
		fs.StringVar(&flags.ftCheckpoint, "ft-checkpoint", "", "a model already fine-tuned at 56×56 to use instead of fine-tuning")
		fs.IntVar(&flags.ft.Epochs, "ft-epochs", 1, "56×56 fine-tuning: train.epochs")
		fs.IntVar(&flags.ft.LimitTrain, "ft-limit-train", 20000, "56×56 fine-tuning: data.limit_train (0 = all 60000, the recipe's own)")
		fs.IntVar(&flags.ft.MaxSteps, "ft-max-steps", 0, "56×56 fine-tuning: train.max_steps (0 = off)")
		fs.StringVar(&flags.sizes, "sizes", "28,44,56", "evaluation sizes, comma-separated; each a multiple of the patch size 4")
		fs.IntVar(&flags.evalBatch, "eval-batch", 250, "evaluation batch")
	},
	Measure: measure,
	Plot:    func(r results, dir string) error { return plotBars(r, filepath.Join(dir, "resolution.png")) },
}

func main() { harness.Main(experiment) }

// results are the table and what the prose names.
type results struct {
	Base, Ft                 harness.Budget // the two training budgets
	Checkpoint, FtCheckpoint string         // given with -checkpoint, -ft-checkpoint
	BaseTop1                 float64        // the 28×28 run's own validation (0 with -checkpoint)
	Sizes                    []int
	Images, EvalBatch        int
	Rows                     []tableRow
	Phases                   []phase
}

// tableRow is one way of running a model at each evaluation size.
type tableRow struct {
	Name       string
	Top1, Loss []float64 // per size
}

// phase is one timed step of the experiment.
type phase struct {
	Name string
	S    float64
}

func measure(e *harness.Env) (results, error) {
	rep := results{Base: e.Budget, Ft: flags.ft, Checkpoint: flags.checkpoint, FtCheckpoint: flags.ftCheckpoint, EvalBatch: flags.evalBatch}
	rep.Ft.LimitVal, rep.Ft.Seed, rep.Ft.Sets = e.Budget.LimitVal, e.Budget.Seed, e.Budget.Sets
	for _, s := range strings.Split(flags.sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return rep, fmt.Errorf("-sizes: %q is not a positive integer", s)
		}
		rep.Sizes = append(rep.Sizes, n)
	}
	lap := func(name string, t0 time.Time) {
		rep.Phases = append(rep.Phases, phase{name, time.Since(t0).Seconds()})
		e.Log.Infof("== %s: %.0fs", name, time.Since(t0).Seconds())
	}
	evalCfg := train.DefaultConfig()
	evalCfg.Data.LimitVal, evalCfg.Train.EvalBatchSize = e.Budget.LimitVal, flags.evalBatch
	evalAt := func(ckpt string, size int, m method) (evaluate.Result, error) {
		vit, meta, err := loadAt(ckpt, size, m)
		if err != nil {
			return evaluate.Result{}, err
		}
		if meta.Dataset != "" {
			evalCfg.Data.Name = data.DatasetName(meta.Dataset)
		}
		return harness.Evaluate(vit, meta, evalCfg)
	}

	// 1. The 28×28 model.
	ckpt := flags.checkpoint
	if ckpt == "" {
		t0 := time.Now()
		r, err := e.Train("configs/mnist_vit_tiny_p4.yaml", rep.Base.Overrides(filepath.Join(e.Runs, "train28"))...)
		if err != nil {
			return rep, fmt.Errorf("training at 28: %w", err)
		}
		lap("train at 28×28", t0)
		ckpt, rep.BaseTop1 = r.Checkpoint, r.Top1
	}

	// 2. The 28×28 model at every size, each way.
	for _, m := range methods {
		row := tableRow{Name: m.name}
		for i, size := range rep.Sizes {
			var r evaluate.Result
			if size == 28 && len(rep.Rows) > 0 {
				r.Top1, r.Loss = rep.Rows[0].Top1[i], rep.Rows[0].Loss[i] // the trained grid: every method is the identity
			} else {
				t0 := time.Now()
				var err error
				if r, err = evalAt(ckpt, size, m); err != nil {
					return rep, fmt.Errorf("%s at %d: %w", m.name, size, err)
				}
				rep.Images = r.Images
				lap(fmt.Sprintf("eval %s at %d", m.short, size), t0)
			}
			row.Top1, row.Loss = append(row.Top1, r.Top1), append(row.Loss, r.Loss)
		}
		rep.Rows = append(rep.Rows, row)
	}

	// 3. Fine-tune at 56×56 from the 28×28 weights, and evaluate it.
	ftCkpt := flags.ftCheckpoint
	var ftVal *evaluate.Result
	if ftCkpt == "" {
		t0 := time.Now()
		r, err := e.Train("configs/mnist_finetune_56.yaml", rep.Ft.Overrides(filepath.Join(e.Runs, "finetune56"), "finetune.init_from="+ckpt)...)
		if err != nil {
			return rep, fmt.Errorf("fine-tuning at 56: %w", err)
		}
		lap("fine-tune at 56×56", t0)
		ftCkpt, ftVal = r.Checkpoint, &evaluate.Result{Top1: r.Top1, Loss: r.Loss}
	}
	row := tableRow{Name: fmt.Sprintf("fine-tuned at %d×%d (bicubic to other sizes)", ftSize, ftSize)}
	for _, size := range rep.Sizes {
		r := ftVal
		if size != ftSize || r == nil { // else train.Run's own evaluation of the final weights, same images
			t0 := time.Now()
			v, err := evalAt(ftCkpt, size, methods[0])
			if err != nil {
				return rep, fmt.Errorf("fine-tuned at %d: %w", size, err)
			}
			r = &v
			lap(fmt.Sprintf("eval fine-tuned at %d", size), t0)
		}
		row.Top1, row.Loss = append(row.Top1, r.Top1), append(row.Loss, r.Loss)
	}
	rep.Rows = append(rep.Rows, row)
	return rep, nil
}

// FtTop1 is the fine-tuned model's top-1 at 56×56 (-1 when not evaluated there).
func (r results) FtTop1() float64 {
	for i, s := range r.Sizes {
		if s == ftSize {
			return r.Rows[len(r.Rows)-1].Top1[i]
		}
	}
	return -1
}

// Short says whether the models were trained here on less than the
// recipes' own budgets.
func (r results) Short() bool {
	return r.Checkpoint == "" && r.FtCheckpoint == "" && (r.Base.Epochs < 6 || r.Base.LimitTrain != 0 || r.Base.MaxSteps != 0 ||
		r.Ft.Epochs != 1 || r.Ft.LimitTrain != 0 || r.Ft.MaxSteps != 0)
}

// method is how a 28×28 model's position table reaches a larger grid.
type method struct {
	name, short string
	interp      string // bicubic | bilinear | nearest; "" = zero-padded
}

var methods = []method{
	{"bicubic (timm default)", "bicubic", "bicubic"},
	{"bilinear", "bilinear", "bilinear"},
	{"naive: nearest (each position repeated)", "nearest", "nearest"},
	{"naive: zero-padded (7×7 table top-left, zeros elsewhere)", "zero-padded", ""},
}

// loadAt rebuilds a checkpoint's model at img_size size×size with the
// method's position table.
func loadAt(ckpt string, size int, m method) (*layers.VisionTransformer, checkpoint.ModelMeta, error) {
	sz := layers.Size2{size, size}
	if m.interp != "" {
		vit, meta, _, err := checkpoint.LoadModel(ckpt, tensor.Float32, &sz, m.interp)
		return vit, meta, err
	}
	src, meta, _, err := checkpoint.LoadModel(ckpt, tensor.Float32, nil, "")
	if err != nil {
		return nil, meta, err
	}
	vit, err := zeroPadded(src, sz)
	return vit, meta, err
}

// zeroPadded copies src into a model at img_size sz whose position table
// holds src's class-token row and its gh×gw grid in the top-left corner of
// the new grid, zeros elsewhere: what "just use the old table" amounts to.
func zeroPadded(src *layers.VisionTransformer, sz layers.Size2) (*layers.VisionTransformer, error) {
	c := src.Config
	c.ImgSize = sz
	dst, err := layers.New(c, tensor.Float32, 0)
	if err != nil {
		return nil, err
	}
	for _, p := range dst.Params {
		s := src.Param(p.Name).Value.Data().([]float32)
		d := p.Value.Data().([]float32)
		if p.Name != "pos_embed" {
			copy(d, s)
			continue
		}
		dim := c.EmbedDim
		oh, ow := src.Config.Grid()
		nh, nw := c.Grid()
		if nh < oh || nw < ow {
			return nil, fmt.Errorf("zero-padding: grid %dx%d is smaller than the trained %dx%d", nh, nw, oh, ow)
		}
		clear(d)
		copy(d[:dim], s[:dim]) // class token
		for i := 0; i < oh; i++ {
			for j := 0; j < ow; j++ {
				copy(d[(1+i*nw+j)*dim:(2+i*nw+j)*dim], s[(1+i*ow+j)*dim:(2+i*ow+j)*dim])
			}
		}
	}
	return dst, nil
}

// plotBars draws top-1 as grouped bars: a group per evaluation size, a bar
// per table row, its value written above it.
func plotBars(rep results, path string) error {
	p := plot.New()
	p.Title.Text = "MNIST top-1 of a 28×28-trained ViT run at larger inputs"
	p.Y.Label.Text = "top-1 (%)"
	p.X.Label.Text = "evaluation size"
	n := len(rep.Rows)
	w := vg.Points(90 / float64(n))
	for i, r := range rep.Rows {
		v := make(plotter.Values, len(rep.Sizes))
		var lab plotter.XYLabels
		for j := range rep.Sizes {
			v[j] = 100 * r.Top1[j]
			lab.XYs = append(lab.XYs, plotter.XY{X: float64(j), Y: v[j] + 1})
			lab.Labels = append(lab.Labels, fmt.Sprintf("%.1f", v[j]))
		}
		bars, err := harness.Bars(p, r.Name, i, n, w, v, nil)
		if err != nil {
			return err
		}
		if err := harness.Labels(p, lab, vg.Point{X: bars.Offset}, func(s *text.Style) {
			s.Font.Size, s.XAlign = vg.Points(7), -0.5
		}); err != nil {
			return err
		}
	}
	names := make([]string, len(rep.Sizes))
	for j, s := range rep.Sizes {
		names[j] = fmt.Sprintf("%d×%d", s, s)
	}
	p.NominalX(names...)
	p.Y.Min, p.Y.Max = 0, 150 // headroom for the legend
	p.Y.Tick.Marker = harness.Integers(0, 100, 20)
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	return plotfile.SavePlot(path, p, 190*vg.Millimeter, 120*vg.Millimeter)
}
