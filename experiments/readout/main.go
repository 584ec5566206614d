// Command readout compares the two classifier readouts of the ViT, the class
// token (model.readout=cls) and the mean of the patch tokens
// (model.readout=mean), on MNIST with the same recipe, budget and seed.
//
//	go run ./experiments/readout [-limit-train 20000] [-epochs 8] [-limit-val 5000] [-seed 0] [-set key=value]…
package main

import (
	_ "embed"
	"image/color"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/vitgo/vit/experiments/internal/harness"
	"github.com/vitgo/vit/report"
)

//go:embed readme.md.tmpl
var readme string

var experiment = harness.Experiment[results]{
	Name:    "readout",
	Readme:  readme,
	Budget:  &harness.Budget{LimitTrain: 20000, LimitVal: 5000, Epochs: 8},
	Measure: measure,
	Plot:    func(r results, dir string) error { return plotCurves(r.Rows, filepath.Join(dir, "curves.png")) },
}

func main() { harness.Main(experiment) }

// results are both runs.
type results struct {
	LimitVal int
	Rows     []row
}

// row is one readout's run.
type row struct {
	Readout   string
	Run       harness.Run
	TrainLoss float64 // mean training loss of the last epoch
}

func measure(e *harness.Env) (results, error) {
	res := results{LimitVal: e.Budget.LimitVal}
	for _, readout := range []string{"cls", "mean"} {
		dir := filepath.Join(e.Runs, readout)
		r, err := e.Train("configs/mnist_vit_tiny_p4.yaml", e.Budget.Overrides(dir, "model.readout="+readout)...)
		if err != nil {
			return res, err
		}
		rw := row{Readout: readout, Run: r}
		if n := len(r.Epochs); n > 0 {
			rw.TrainLoss = r.Epochs[n-1].TrainLoss
		}
		res.Rows = append(res.Rows, rw)
	}
	return res, nil
}

// Diff is mean − cls in points of validation top-1.
func (r results) Diff() float64 { return 100 * (r.Rows[1].Run.Top1 - r.Rows[0].Run.Top1) }

// plotCurves draws two panels, validation top-1 and training loss against
// the step, with one line per readout. Results recorded without their
// epochs (transcribed from an older README) leave the PNG as it is.
func plotCurves(rows []row, path string) error {
	if len(rows) == 0 || len(rows[0].Run.Epochs) == 0 {
		return nil
	}
	colors := []color.Color{color.RGBA{31, 119, 180, 255}, color.RGBA{214, 39, 40, 255}}
	panels := []struct {
		title, y string
		pick     func(harness.Epoch) (float64, bool)
	}{
		{"validation top-1", "top-1 (%)", func(e harness.Epoch) (float64, bool) { return 100 * e.ValTop1, e.Val }},
		{"training loss (epoch mean)", "loss", func(e harness.Epoch) (float64, bool) { return e.TrainLoss, true }},
	}
	plots := make([]*plot.Plot, len(panels))
	for i, p := range panels {
		pl := plot.New()
		pl.Title.Text = p.title
		pl.X.Label.Text = "step"
		pl.Y.Label.Text = p.y
		pl.Y.Tick.Marker = preciseTicks{}
		pl.Add(plotter.NewGrid())
		for j, r := range rows {
			var xy plotter.XYs
			for _, e := range r.Run.Epochs {
				if v, ok := p.pick(e); ok {
					xy = append(xy, plotter.XY{X: float64(e.Step), Y: v})
				}
			}
			if len(xy) == 0 {
				continue
			}
			_, pts, err := harness.LinePoints(pl, "readout="+r.Readout, colors[j%len(colors)], xy)
			if err != nil {
				return err
			}
			pts.Radius = vg.Points(2.5)
		}
		pl.Legend.Top = i == 1
		pl.Legend.Left = false
		if i == 0 {
			pl.Legend.YOffs = vg.Centimeter // above the bottom edge, clear of the rising curves' start
		}
		plots[i] = pl
	}
	return report.SavePanels(path, 14*vg.Centimeter, 10*vg.Centimeter, plots)
}

// preciseTicks are plot's default ticks labelled with enough digits that
// neighbouring labels differ (the default prints 2.25 and 2.2 both as "2.2").
type preciseTicks struct{}

// Ticks implements plot.Ticker.
func (preciseTicks) Ticks(min, max float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'g', 6, 64)
		}
	}
	return ts
}
