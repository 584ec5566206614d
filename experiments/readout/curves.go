package main

import (
	"image/color"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/vitgo/vit/experiments/internal/harness"
	"github.com/vitgo/vit/internal/plotfile"
)

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
	const w, h = 14 * vg.Centimeter, 10 * vg.Centimeter
	img := vgimg.New(w*vg.Length(len(panels)), h)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: len(panels)}
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
		pl.Draw(tiles.At(dc, i, 0))
	}
	return plotfile.SavePNG(path, img)
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
