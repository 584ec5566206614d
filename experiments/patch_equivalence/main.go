// Command patch_equivalence checks that the two patch embeddings,
// layers.PatchConv (Gorgonia's Conv2d, stride P) and layers.PatchLinear
// (graph.Patchify + graph.Linear), compute the same function with the same
// weight [D, C, P, P]: outputs and the gradients with respect to images,
// weight and bias, in float64 and float32, for a few shapes; and that the
// check can fail: the same weight flattened in another order (channels-last,
// or the kernel transposed) gives a different output.
//
//	go run ./experiments/patch_equivalence
package main

import (
	_ "embed"
	"flag"
	"fmt"
	"math"
	"path/filepath"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/experiments/internal/harness"
	"github.com/vitgo/vit/internal/plotfile"
	"github.com/vitgo/vit/layers"
)

//go:embed readme.md.tmpl
var readme string

var flags struct {
	seed uint64
	reps int
}

var experiment = harness.Experiment[rows]{
	Name:   "patch_equivalence",
	Readme: readme,
	Flags: func(fs *flag.FlagSet) {
		fs.Uint64Var(&flags.seed, "seed", 1, "seeds the random images, weights and loss cotangent")
		fs.IntVar(&flags.reps, "reps", 5, "timed float32 forward+backward runs per form (median reported)")
	},
	Measure: measure,
	Plot:    plotDiffs,
}

func main() { harness.Main(experiment) }

// shapes are the problems checked: MNIST's default, a CIFAR-sized RGB
// input, a non-square one, and ViT-B/16's 224×224 at batch 1.
var shapes = []shape{
	{Name: "28×28 p4 C1 (B8, D64)", B: 8, C: 1, H: 28, W: 28, P: 4, D: 64},
	{Name: "32×32 p4 C3 (B4, D192)", B: 4, C: 3, H: 32, W: 32, P: 4, D: 192},
	{Name: "28×42 p7 C3 (B2, D32)", B: 2, C: 3, H: 28, W: 42, P: 7, D: 32},
	{Name: "224×224 p16 C3 (B1, D768)", B: 1, C: 3, H: 224, W: 224, P: 16, D: 768},
}

// row is one shape's measurements.
type row struct {
	S                shape
	Scale            float64 // max |y|
	F64, F32         diffs   // max |conv − linear| in each dtype (float32: relative to Scale)
	CtrlCL, CtrlT    float64 // float64 max |conv − linear with a wrongly ordered weight|
	ConvMs, LinearMs float64 // median float32 forward+backward
}

// maxAbsDiff is max_i |a_i − b_i|; maxAbs is max_i |a_i|, the scale a
// difference is read against.
func maxAbsDiff(a, b []float64) float64 { return floats.Distance(a, b, math.Inf(1)) }
func maxAbs(a []float64) float64        { return floats.Norm(a, math.Inf(1)) }

// diffs are max |conv − linear| of the output and each gradient.
type diffs struct{ Out, DX, DW, DB float64 }

func (d diffs) grads() float64 { return max(d.DX, d.DW, d.DB) }

// compare runs both forms in dtype dt. With rel, each difference is divided
// by the conv result's max |value| (float32 rounding is relative).
func compare(pr problem, dt tensor.Dtype, rel bool) (diffs, result, error) {
	conv, err := run(pr, layers.PatchConv, pr.w, true, dt)
	if err != nil {
		return diffs{}, result{}, fmt.Errorf("%s conv %v: %w", pr.s.Name, dt, err)
	}
	lin, err := run(pr, layers.PatchLinear, pr.w, true, dt)
	if err != nil {
		return diffs{}, result{}, fmt.Errorf("%s linear %v: %w", pr.s.Name, dt, err)
	}
	d := func(a, b []float64) float64 {
		if rel {
			return maxAbsDiff(a, b) / maxAbs(a)
		}
		return maxAbsDiff(a, b)
	}
	return diffs{d(conv.out, lin.out), d(conv.dx, lin.dx), d(conv.dw, lin.dw), d(conv.db, lin.db)}, conv, nil
}

// rows are the measurements, one per shape.
type rows []row

func measure(e *harness.Env) (rows, error) {
	var rs rows
	for i, s := range shapes {
		pr := newProblem(s, flags.seed+uint64(i))
		d64, conv, err := compare(pr, tensor.Float64, false)
		if err != nil {
			return nil, err
		}
		d32, _, err := compare(pr, tensor.Float32, true)
		if err != nil {
			return nil, err
		}
		r := row{S: s, Scale: maxAbs(conv.out), F64: d64, F32: d32}
		for _, c := range []struct {
			w   []float64
			out *float64
		}{{channelsLastOrder(pr.w, s.D, s.C, s.P), &r.CtrlCL}, {transposedKernel(pr.w, s.D, s.C, s.P), &r.CtrlT}} {
			ctl, err := run(pr, layers.PatchLinear, c.w, false, tensor.Float64)
			if err != nil {
				return nil, fmt.Errorf("%s control: %w", s.Name, err)
			}
			*c.out = maxAbsDiff(conv.out, ctl.out)
		}
		for _, t := range []struct {
			f   layers.PatchEmbedForm
			out *float64
		}{{layers.PatchConv, &r.ConvMs}, {layers.PatchLinear, &r.LinearMs}} {
			d, err := timeFwdBwd(s, t.f, flags.reps)
			if err != nil {
				return nil, fmt.Errorf("%s timing: %w", s.Name, err)
			}
			*t.out = float64(d.Microseconds()) / 1000
		}
		rs = append(rs, r)
		e.Log.Infof("%s done", s.Name)
	}
	return rs, nil
}

func plotDiffs(rs rows, dir string) error {
	names := []string{"float64 output", "float64 max over ∂x, ∂W, ∂b", "float32 output (relative)", "float32 max over ∂x, ∂W, ∂b (relative)",
		"control (P,P,C) order, float64 output", "control kernelᵀ, float64 output"}
	ss := make([]series, len(names))
	groups := make([]string, len(rs))
	for i := range ss {
		ss[i].name = names[i]
	}
	for j, r := range rs {
		groups[j] = fmt.Sprintf("%dx%d p%d C%d", r.S.H, r.S.W, r.S.P, r.S.C)
		for i, v := range []float64{r.F64.Out, r.F64.grads(), r.F32.Out, r.F32.grads(), r.CtrlCL, r.CtrlT} {
			ss[i].values = append(ss[i].values, v)
		}
	}
	return logBars("conv vs unfold+linear patch embedding", "max |conv − linear| (0 drawn at 1e-18)", groups, ss,
		filepath.Join(dir, "max_abs_diff.png"))
}

// floor is where the log-scale bars start; an exact zero is drawn at it.
const floor = 1e-18

// series is one bar per group.
type series struct {
	name   string
	values []float64
}

// logBars draws grouped bars of positive values on a log y axis: each bar
// stacks on an undrawn one of height floor, so it rises from floor instead
// of from 0 (which a log scale cannot show).
func logBars(title, ylabel string, groups []string, ss []series, path string) error {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = ylabel
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = harness.Decades{}
	w := vg.Points(60 / float64(len(ss)))
	for i, s := range ss {
		base := make(plotter.Values, len(groups))
		top := make(plotter.Values, len(groups))
		var zeros plotter.XYLabels
		for j, v := range s.values {
			base[j] = floor
			if v == 0 {
				zeros.XYs = append(zeros.XYs, plotter.XY{X: float64(j), Y: floor * 3})
				zeros.Labels = append(zeros.Labels, "0")
			}
			if !(v > floor) || math.IsInf(v, 0) {
				v = floor * 1.0001 // zero (or below the axis): a stub at the floor
			}
			top[j] = v - floor
		}
		bars, err := harness.Bars(p, s.name, i, len(ss), w, top, base)
		if err != nil {
			return err
		}
		if len(zeros.XYs) > 0 {
			if err := harness.Labels(p, zeros, vg.Point{X: bars.Offset - w/4}, nil); err != nil {
				return err
			}
		}
	}
	p.Legend.Top = true
	p.Legend.Left = true
	p.Y.Min, p.Y.Max = floor, 1e9 // headroom for the legend
	p.NominalX(groups...)
	return plotfile.SavePlot(path, p, 200*vg.Millimeter, 110*vg.Millimeter)
}
