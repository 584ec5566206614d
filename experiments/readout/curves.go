package main

import (
	"fmt"
	"image/color"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/vitgo/vit/internal/plotfile"
	"github.com/vitgo/vit/train"
)

// curves are one run's metrics.csv columns against the step.
type curves struct {
	trainLoss, valTop1 plotter.XYs
}

// readCurves reads train_loss and val_top1 (as a percentage) per row of a
// metrics.csv; rows without a validation leave val_top1 out.
func readCurves(path string) (curves, error) {
	header, rows, err := train.ReadMetrics(path)
	if err != nil {
		return curves{}, err
	}
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	for _, k := range []string{"step", "train_loss", "val_top1"} {
		if _, ok := col[k]; !ok {
			return curves{}, fmt.Errorf("%s: no %q column", path, k)
		}
	}
	var c curves
	for i, r := range rows {
		step, err := strconv.ParseFloat(r[col["step"]], 64)
		if err != nil {
			return curves{}, fmt.Errorf("%s: row %d: step: %w", path, i+1, err)
		}
		if v, err := strconv.ParseFloat(r[col["train_loss"]], 64); err == nil {
			c.trainLoss = append(c.trainLoss, plotter.XY{X: step, Y: v})
		}
		if v, err := strconv.ParseFloat(r[col["val_top1"]], 64); err == nil {
			c.valTop1 = append(c.valTop1, plotter.XY{X: step, Y: 100 * v})
		}
	}
	return c, nil
}

// plotCurves draws two panels, validation top-1 and training loss against
// the step, with one line per readout.
func plotCurves(rows []row, path string) error {
	colors := []color.Color{color.RGBA{31, 119, 180, 255}, color.RGBA{214, 39, 40, 255}}
	panels := []struct {
		title, y string
		pick     func(curves) plotter.XYs
	}{
		{"validation top-1", "top-1 (%)", func(c curves) plotter.XYs { return c.valTop1 }},
		{"training loss (epoch mean)", "loss", func(c curves) plotter.XYs { return c.trainLoss }},
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
			c, err := readCurves(r.Metrics)
			if err != nil {
				return err
			}
			xy := p.pick(c)
			if len(xy) == 0 {
				continue
			}
			l, pts, err := plotter.NewLinePoints(xy)
			if err != nil {
				return fmt.Errorf("plot %s %s: %w", r.Readout, p.title, err)
			}
			l.Color, pts.Color = colors[j%len(colors)], colors[j%len(colors)]
			pts.Radius = vg.Points(2.5)
			pl.Add(l, pts)
			pl.Legend.Add("readout="+r.Readout, l, pts)
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
