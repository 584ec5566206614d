package main

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"

	"github.com/vitgo/vit/experiments/internal/harness"
	"github.com/vitgo/vit/internal/plotfile"
)

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
