package main

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/vitgo/vit/experiments/internal/harness"
	"github.com/vitgo/vit/internal/plotfile"
)

// plotBars draws one group of bars per variant, one bar per learning-rate
// multiplier: mean final top-1 over the finite runs, whiskers from the
// worst to the best run, and the count of non-finite runs written above.
func plotBars(cells []*cell, mults []float64, vs []variant, path string) error {
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
	for k, mult := range mults {
		shift := (float64(k) - float64(len(mults)-1)/2) * group
		vals := make(plotter.Values, len(vs))
		var errs plotter.XYs
		var lows, highs []float64
		for i, v := range vs {
			c := find(cells, mult, v.Name)
			if c == nil {
				return fmt.Errorf("plot: no runs for lr ×%g %s", mult, v.Name)
			}
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
	for _, v := range vs {
		names = append(names, v.Name)
	}
	pl.NominalX(names...)
	pl.X.Min, pl.X.Max = -0.7, float64(len(vs))-0.3
	pl.Legend.Top = true
	pl.Legend.Left = true
	return plotfile.SavePlot(path, pl, 26*vg.Centimeter, 12*vg.Centimeter)
}

func find(cells []*cell, mult float64, name string) *cell {
	for _, c := range cells {
		if c.LRMult == mult && c.V.Name == name {
			return c
		}
	}
	return nil
}
