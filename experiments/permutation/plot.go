package main

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/vitgo/vit/experiments/internal/harness"
	"github.com/vitgo/vit/internal/plotfile"
)

// floor is where an exact zero is drawn on the log axis.
const floor = 1e-18

// plotRel draws each condition's relative error of the patch tokens after
// each block on a log y axis.
func plotRel(rs []result, depth int, path string) error {
	p := plot.New()
	p.Title.Text = "shuffled patches: ‖Δ‖/‖tokens‖ after un-shuffling"
	p.X.Label.Text = "after block (normed residual stream)"
	p.Y.Label.Text = "relative error"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = harness.Decades{}
	p.Add(plotter.NewGrid())
	for i, r := range rs {
		var xy plotter.XYs
		for b, v := range r.RelBlock {
			xy = append(xy, plotter.XY{X: float64(b + 1), Y: math.Max(v, floor)})
		}
		l, s, err := harness.LinePoints(p, fmt.Sprintf("%s, pos %s, %s", r.Weights, r.Pos, r.Dtype), plotutil.Color(i), xy)
		if err != nil {
			return err
		}
		s.Shape = plotutil.Shape(i)
		if r.Dtype == "float32" {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
	}
	p.X.Tick.Marker = harness.Integers(1, depth, 1)
	p.Y.Min, p.Y.Max = 1e-18, 1e3
	p.Legend.Top = true
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	return plotfile.SavePlot(path, p, 180*vg.Millimeter, 120*vg.Millimeter)
}
