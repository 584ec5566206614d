package main

import (
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/vitgo/vit/experiments/internal/harness"
	"github.com/vitgo/vit/internal/plotfile"
)

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
