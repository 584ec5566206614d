package train

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
)

// PlotCurves draws a run's metrics.csv as one PNG of three panels against
// the step: losses (train, validation), validation accuracy (top-1, top-5,
// and the EMA's top-1 when present) and the learning rate.
func PlotCurves(metricsPath, pngPath string) error {
	header, rows, err := ReadMetrics(metricsPath)
	if err != nil {
		return err
	}
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	series := func(name string) plotter.XYs {
		var xy plotter.XYs
		for _, r := range rows {
			x, err1 := strconv.ParseFloat(r[col["step"]], 64)
			y, err2 := strconv.ParseFloat(r[col[name]], 64)
			if err1 == nil && err2 == nil && r[col[name]] != "" {
				xy = append(xy, plotter.XY{X: x, Y: y})
			}
		}
		return xy
	}
	panels := []struct {
		title string
		lines []string
	}{
		{"loss", []string{"train_loss", "val_loss"}},
		{"accuracy", []string{"val_top1", "val_top5", "ema_val_top1"}},
		{"learning rate", []string{"lr"}},
	}
	colors := []color.Color{color.RGBA{31, 119, 180, 255}, color.RGBA{255, 127, 14, 255}, color.RGBA{44, 160, 44, 255}}
	const w, h = 15 * vg.Centimeter, 10 * vg.Centimeter
	img := vgimg.New(w*vg.Length(len(panels)), h)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: len(panels)}
	for i, p := range panels {
		pl := plot.New()
		pl.Title.Text = p.title
		pl.X.Label.Text = "step"
		for j, name := range p.lines {
			xy := series(name)
			if len(xy) == 0 {
				continue
			}
			l, pts, err := plotter.NewLinePoints(xy)
			if err != nil {
				return fmt.Errorf("plot %s: %w", name, err)
			}
			l.Color, pts.Color = colors[j], colors[j]
			pts.Radius = vg.Points(2)
			pl.Add(l, pts)
			pl.Legend.Add(name, l)
		}
		pl.Legend.Top = p.title == "loss" || p.title == "learning rate"
		pl.Draw(tiles.At(dc, i, 0))
	}
	return plotfile.SavePNG(pngPath, img)
}
