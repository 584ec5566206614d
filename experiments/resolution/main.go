// Command resolution trains the default MNIST ViT at 28×28 (patch 4, a 7×7
// grid) and evaluates it at larger input sizes with the position table
// carried over four ways — resampled bicubically (timm's default) or
// bilinearly, and two naive ways: repeated (nearest) and zero-padded — then
// fine-tunes it for one epoch at 56×56 (configs/mnist_finetune_56.yaml) and
// evaluates that too. It writes README.md and resolution.png into -out.
//
//	go run ./experiments/resolution
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	expreport "github.com/vitgo/vit/experiments/internal/report"
	"github.com/vitgo/vit/train"
)

// opts are the command's flags.
type opts struct {
	out, checkpoint, ftCheckpoint, workdir string
	base, ft                               budget
	sizes                                  []int
	ftSize                                 int
	limitVal, evalBatch                    int
	seed                                   uint64
}

func main() {
	var o opts
	var sizes string
	flag.StringVar(&o.out, "out", "experiments/resolution", "folder for README.md and the PNG")
	flag.StringVar(&o.checkpoint, "checkpoint", "", "a trained 28×28 model (.safetensors) to use instead of training one")
	flag.StringVar(&o.ftCheckpoint, "ft-checkpoint", "", "a model already fine-tuned at 56×56 to use instead of fine-tuning")
	flag.StringVar(&o.workdir, "workdir", "", "where the training runs write (default: a temp dir, removed at exit)")
	flag.IntVar(&o.base.epochs, "epochs", 2, "28×28 training: train.epochs (the recipe's own is 6)")
	flag.IntVar(&o.base.limitTrain, "limit-train", 0, "28×28 training: data.limit_train (0 = all 60000)")
	flag.IntVar(&o.base.maxSteps, "max-steps", 0, "28×28 training: train.max_steps (0 = off)")
	flag.IntVar(&o.ft.epochs, "ft-epochs", 1, "56×56 fine-tuning: train.epochs")
	flag.IntVar(&o.ft.limitTrain, "ft-limit-train", 20000, "56×56 fine-tuning: data.limit_train (0 = all 60000, the recipe's own)")
	flag.IntVar(&o.ft.maxSteps, "ft-max-steps", 0, "56×56 fine-tuning: train.max_steps (0 = off)")
	flag.StringVar(&sizes, "sizes", "28,44,56", "evaluation sizes, comma-separated; each a multiple of the patch size 4")
	flag.IntVar(&o.limitVal, "limit-val", 0, "evaluate on the first N MNIST test images (0 = all 10000)")
	flag.IntVar(&o.evalBatch, "eval-batch", 250, "evaluation batch")
	flag.Uint64Var(&o.seed, "seed", 0, "train.seed of both training runs")
	flag.Parse()
	o.ftSize = 56
	for _, s := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			fmt.Fprintf(os.Stderr, "resolution: -sizes: %q is not a positive integer\n", s)
			os.Exit(2)
		}
		o.sizes = append(o.sizes, n)
	}
	if err := run(o, expreport.CommandLine("resolution")); err != nil {
		fmt.Fprintln(os.Stderr, "resolution:", err)
		os.Exit(1)
	}
}

// phase is one timed step of the experiment.
type phase struct {
	name string
	d    time.Duration
}

// report is everything the README says.
type report struct {
	base, ft       string // the two models' provenance
	baseVal, ftVal *train.EvalResult
	rows           []tableRow
	phases         []phase
	sizes          []int
	images         int
	wall           time.Duration
	cmd            string
}

// tableRow is one way of running a model at each evaluation size.
type tableRow struct {
	name string
	top1 []float64 // per size
	loss []float64
}

func run(o opts, cmd string) error {
	start := time.Now()
	rep := report{sizes: o.sizes, cmd: cmd}
	lap := func(name string, t0 time.Time) {
		rep.phases = append(rep.phases, phase{name, time.Since(t0)})
		fmt.Fprintf(os.Stderr, "== %s: %.0fs\n", name, time.Since(t0).Seconds())
	}
	dir := o.workdir
	if dir == "" && (o.checkpoint == "" || o.ftCheckpoint == "") {
		d, err := os.MkdirTemp("", "vit-resolution-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}

	// 1. The 28×28 model.
	ckpt := o.checkpoint
	rep.base = "the checkpoint `" + o.checkpoint + "`"
	if ckpt == "" {
		t0 := time.Now()
		var val train.EvalResult
		var err error
		ckpt, val, err = trainRun("configs/mnist_vit_tiny.yaml", filepath.Join(dir, "train28"), o.base, o.limitVal, o.seed)
		if err != nil {
			return fmt.Errorf("training at 28: %w", err)
		}
		lap("train at 28×28", t0)
		rep.baseVal = &val
		rep.base = fmt.Sprintf("configs/mnist_vit_tiny.yaml trained with %s, train.seed=%d (last.safetensors)", o.base, o.seed)
	}

	// 2. The 28×28 model at every size, each way.
	for _, m := range methods {
		row := tableRow{name: m.name}
		for i, size := range o.sizes {
			var r train.EvalResult
			if size == 28 && len(rep.rows) > 0 {
				r.Top1, r.Loss = rep.rows[0].top1[i], rep.rows[0].loss[i] // the trained grid: every method is the identity
			} else {
				t0 := time.Now()
				vit, meta, err := loadAt(ckpt, size, m)
				if err != nil {
					return fmt.Errorf("%s at %d: %w", m.name, size, err)
				}
				if r, err = evaluate(vit, meta, o.limitVal, o.evalBatch); err != nil {
					return fmt.Errorf("%s at %d: %w", m.name, size, err)
				}
				rep.images = r.Images
				lap(fmt.Sprintf("eval %s at %d", m.short, size), t0)
			}
			row.top1, row.loss = append(row.top1, r.Top1), append(row.loss, r.Loss)
		}
		rep.rows = append(rep.rows, row)
	}

	// 3. Fine-tune at 56×56 from the 28×28 weights, and evaluate it.
	ftCkpt := o.ftCheckpoint
	rep.ft = "the checkpoint `" + o.ftCheckpoint + "`"
	if ftCkpt == "" {
		t0 := time.Now()
		var val train.EvalResult
		var err error
		ftCkpt, val, err = trainRun("configs/mnist_finetune_56.yaml", filepath.Join(dir, "finetune56"), o.ft, o.limitVal, o.seed,
			"finetune.init_from="+ckpt)
		if err != nil {
			return fmt.Errorf("fine-tuning at 56: %w", err)
		}
		lap("fine-tune at 56×56", t0)
		rep.ftVal = &val
		rep.ft = fmt.Sprintf("configs/mnist_finetune_56.yaml (pos_embed resampled bicubically 7×7 → 14×14 at load, layer decay 0.75, lr 5e-4) "+
			"with %s, train.seed=%d, finetune.init_from = the 28×28 model", o.ft, o.seed)
	}
	row := tableRow{name: fmt.Sprintf("fine-tuned at %d×%d (bicubic to other sizes)", o.ftSize, o.ftSize)}
	for _, size := range o.sizes {
		var r train.EvalResult
		if size == o.ftSize && rep.ftVal != nil {
			r = *rep.ftVal // train.Run's own evaluation of the final weights, same images
		} else {
			t0 := time.Now()
			vit, meta, err := loadAt(ftCkpt, size, methods[0])
			if err != nil {
				return fmt.Errorf("fine-tuned at %d: %w", size, err)
			}
			if r, err = evaluate(vit, meta, o.limitVal, o.evalBatch); err != nil {
				return fmt.Errorf("fine-tuned at %d: %w", size, err)
			}
			lap(fmt.Sprintf("eval fine-tuned at %d", size), t0)
		}
		row.top1, row.loss = append(row.top1, r.Top1), append(row.loss, r.Loss)
	}
	rep.rows = append(rep.rows, row)
	rep.wall = time.Since(start)

	var tbl strings.Builder
	writeTable(&tbl, rep)
	fmt.Print(tbl.String())
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	png := filepath.Join(o.out, "resolution.png")
	if err := plotBars(rep, png); err != nil {
		return fmt.Errorf("plot %s: %w", png, err)
	}
	return writeReadme(filepath.Join(o.out, "README.md"), tbl.String(), rep, o)
}

func writeTable(w io.Writer, rep report) {
	fmt.Fprint(w, "| position table |")
	for _, s := range rep.sizes {
		fmt.Fprintf(w, " %d×%d top-1 (loss) |", s, s)
	}
	fmt.Fprintln(w)
	fmt.Fprint(w, "|---|")
	for range rep.sizes {
		fmt.Fprint(w, "---:|")
	}
	fmt.Fprintln(w)
	for _, r := range rep.rows {
		fmt.Fprintf(w, "| %s |", r.name)
		for i := range rep.sizes {
			fmt.Fprintf(w, " %.2f%% (%.3f) |", 100*r.top1[i], r.loss[i])
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
}

func writeReadme(path, table string, rep report, o opts) error {
	var b strings.Builder
	b.WriteString(`# Changing the input resolution: resampling the position table

A ViT's position table has one row per patch of the grid it was trained on. Run at a larger input the
grid grows (28×28 with patch 4 is 7×7; 44×44 is 11×11; 56×56 is 14×14), so the table must be carried to
the new grid. timm resamples it as an image (bicubic by default); this experiment compares that with
bilinear resampling and with two naive carries — *nearest* (each old position repeated over a block of
new ones) and *zero-padded* (the 7×7 table in the top-left corner, zeros elsewhere: what keeping the old
rows and not thinking amounts to) — and then fine-tunes one epoch at 56×56 with the bicubically resampled
table (configs/mnist_finetune_56.yaml).

The digits are bilinearly upsampled by the data loader to the model's img_size, so at 56×56 each patch sees
a quarter of what it saw at 28×28: the patch embedding is out of its training distribution whichever table
is used; the rows show how much the position table adds to that.
44 stands in for 42: 42 is not a multiple of the patch size 4 (model.img_size must be), 44 is the nearest
size that is (an 11×11 grid).

`)
	fmt.Fprintf(&b, "- 28×28 model: %s", rep.base)
	if rep.baseVal != nil {
		fmt.Fprintf(&b, "; its own validation: top-1 %.2f%%", 100*rep.baseVal.Top1)
	}
	fmt.Fprintf(&b, ".\n- Fine-tuned model: %s.\n", rep.ft)
	fmt.Fprintf(&b, "- Evaluation: the first %d MNIST test images, eval mode, batch %d.\n\n", rep.images, o.evalBatch)
	b.WriteString("Command (from the repository root):\n\n    " + rep.cmd + "\n\n")
	fmt.Fprintf(&b, "Wall time on the 2-core machine: %.0f s (excluding compilation):", rep.wall.Seconds())
	for i, p := range rep.phases {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, " %s %.0f s", p.name, p.d.Seconds())
	}
	b.WriteString(".\n\n")
	b.WriteString(table)
	ft := rep.rows[len(rep.rows)-1]
	for i, s := range rep.sizes {
		if s == o.ftSize {
			verdict := "meets"
			if ft.top1[i] < 0.985 {
				verdict = "does NOT meet"
			}
			fmt.Fprintf(&b, "The fine-tuned %d×%d model scores %.2f%% top-1, which %s the issue's bar of ≥ 98.5%% after one epoch",
				s, s, 100*ft.top1[i], verdict)
			if o.checkpoint == "" && o.ftCheckpoint == "" && (o.base.epochs < 6 || o.base.limitTrain != 0 || o.base.maxSteps != 0 ||
				o.ft.epochs != 1 || o.ft.limitTrain != 0 || o.ft.maxSteps != 0) {
				b.WriteString(" — but this run is on a budget (the recipes' own: 6 epochs at 28×28 on all 60000 images, then one full " +
					"epoch at 56×56), and the bar is for a well-trained 28×28 model; `-epochs 6 -ft-limit-train 0` runs the recipes in full")
			}
			b.WriteString(".\n\n")
		}
	}
	b.WriteString("![top-1 by evaluation size and position-table method](resolution.png)\n")
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
