package main

import (
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/vitgo/vit/experiments/internal/harness"
	"github.com/vitgo/vit/internal/plotfile"
)

// plotCost draws two log-log panels side by side: forward FLOPs of each
// part against the token count, and the measured training step time per
// image (with the time the FLOPs predict at the median achieved rate).
func plotCost(rows []row, o width, path string) error {
	left, err := flopsPanel(rows, o)
	if err != nil {
		return err
	}
	panels := []*plot.Plot{left}
	if o.Measure {
		right, err := timePanel(rows)
		if err != nil {
			return err
		}
		panels = append(panels, right)
	}
	const h = 130 * vg.Millimeter
	w := vg.Length(len(panels)) * 150 * vg.Millimeter
	img := vgimg.New(w, h)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: len(panels), PadX: vg.Millimeter * 4, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2, PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2}
	cs := plot.Align([][]*plot.Plot{panels}, tiles, dc)
	for i, p := range panels {
		p.Draw(cs[0][i])
	}
	return plotfile.SavePNG(path, img)
}

func logLog(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text, p.Y.Label.Text = x, y
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.Legend.Left = true
	return p
}

func flopsPanel(rows []row, o width) (*plot.Plot, error) {
	p := logLog(fmt.Sprintf("forward FLOPs by part (D=%d, depth %d, %d heads, mlp %g)", o.Dim, o.Depth, o.Heads, o.MLP),
		"tokens T", "FLOPs per image")
	for i, part := range harness.Parts {
		if part == "patch proj" || part == "head" {
			continue // not functions of T alone: drawn per input size below
		}
		xy := curve(rows, 0, func(r row) float64 { return r.Flops[part] })
		label := part + " (∝T)"
		if q, ok := map[string]string{"scores QKᵀ": " (∝T²)", "weighted sum PV": " (∝T², = QKᵀ)"}[part]; ok {
			label = part + q
		}
		l, _, err := harness.LinePoints(p, label, plotutil.Color(i), xy)
		if err != nil {
			return nil, err
		}
		l.Width = vg.Points(1.5)
		if part == "scores QKᵀ" {
			l.Width = vg.Points(4)
		}
	}
	for k, part := range []string{"patch proj", "head"} {
		for j, size := range []int{28, 224} {
			xy := curve(rows, size, func(r row) float64 { return r.Flops[part] })
			l, s, err := harness.LinePoints(p, fmt.Sprintf("%s, %d×%d (const)", part, size, size), plotutil.Color(len(harness.Parts)+k), xy)
			if err != nil {
				return nil, err
			}
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(2 + 2*float64(j))}
			s.Shape = plotutil.Shape(j + 1)
		}
	}
	for j, size := range []int{28, 224} {
		l, err := plotter.NewLine(curve(rows, size, func(r row) float64 { return r.Flops.Total() }))
		if err != nil {
			return nil, err
		}
		l.Color = color.Black
		l.Dashes = []vg.Length{vg.Points(1), vg.Points(2 + 2*float64(j))}
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("total, %d×%d", size, size), l)
	}
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	p.Y.Max = 1e11
	p.X.Min = 4
	return p, nil
}

func timePanel(rows []row) (*plot.Plot, error) {
	p := logLog("measured training step (float32, 2 shared cores)", "tokens T", "ms per image")
	var rates []float64
	for _, r := range rows {
		rates = append(rates, r.GFLOPs())
	}
	rate := medianF(rates)
	for j, size := range []int{28, 224} {
		meas := curve(rows, size, func(r row) float64 { return r.StepMs })
		pred := curve(rows, size, func(r row) float64 { return 3 * r.Flops.Total() / (rate * 1e9) * 1000 })
		c := plotutil.Color(j)
		l, s, err := harness.LinePoints(p, fmt.Sprintf("%d×%d measured", size, size), c, meas)
		if err != nil {
			return nil, err
		}
		s.Shape = plotutil.Shape(j + 1)
		l.Width = vg.Points(1.5)
		lp, err := plotter.NewLine(pred)
		if err != nil {
			return nil, err
		}
		lp.Color = c
		lp.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(lp)
		p.Legend.Add(fmt.Sprintf("%d×%d: 3×fwd FLOPs at %.1f GFLOP/s", size, size, rate), lp)
	}
	p.Y.Max *= 8 // headroom for the legend
	p.X.Min = 4
	return p, nil
}

func medianF(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	return slices.Sorted(slices.Values(v))[len(v)/2]
}

// curve is y of the rows of input size×size (0: every row) against their
// token count, in token order.
func curve(rows []row, size int, y func(row) float64) plotter.XYs {
	var xy plotter.XYs
	for _, r := range byTokens(rows) {
		if size == 0 || r.Cfg.ImgSize[0] == size {
			xy = append(xy, plotter.XY{X: float64(r.Tokens()), Y: y(r)})
		}
	}
	return xy
}
