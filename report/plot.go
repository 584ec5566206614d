package report

import (
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/vitgo/vit/internal/plotfile"
)

// curveSmoothing is the weight of the past in the smoothed training loss, a
// bias-corrected exponential moving average over steps.csv's rows
// (TensorBoard's smoothing).
const curveSmoothing = 0.9

// PlotCurves draws a run's curves as one PNG of three panels against the
// step: the loss (steps.csv's per-step training loss, raw and smoothed, and
// metrics.csv's per-epoch validation loss as points), validation accuracy
// (top-1, top-5, and the EMA's top-1 when present) and the learning rate
// (per step). Without a steps.csv (stepsPath "" or missing) the training
// loss and lr come from metrics.csv's per-epoch rows.
func PlotCurves(metricsPath, stepsPath, pngPath string) error {
	header, rows, err := ReadMetrics(metricsPath)
	if err != nil {
		return err
	}
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	epochs := func(name string) plotter.XYs {
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
	var steps []StepRow
	if stepsPath != "" {
		steps, _ = ReadSteps(stepsPath) // missing or unreadable: per-epoch curves only
	}
	loss, lr := epochs("train_loss"), epochs("lr")
	var smooth plotter.XYs
	if len(steps) > 0 {
		loss, lr = stepSeries(steps)
		smooth = smoothed(loss, curveSmoothing)
	}
	blue, orange, green := color.RGBA{31, 119, 180, 255}, color.RGBA{255, 127, 14, 255}, color.RGBA{44, 160, 44, 255}
	raw := color.Color(blue)
	if len(steps) > 0 {
		raw = color.RGBA{158, 202, 225, 255} // the raw per-step loss pale, its smoothed curve dark
	}
	type series struct {
		name   string
		xy     plotter.XYs
		color  color.Color
		points bool // per-epoch values: drawn as points on a line
	}
	perEpoch := len(steps) == 0
	panels := []struct {
		title string
		lines []series
	}{
		{"loss", []series{{"train_loss", loss, raw, perEpoch}, {"train_loss (smoothed)", smooth, color.RGBA{8, 69, 148, 255}, false},
			{"val_loss", epochs("val_loss"), orange, true}}},
		{"accuracy", []series{{"val_top1", epochs("val_top1"), blue, true}, {"val_top5", epochs("val_top5"), orange, true},
			{"ema_val_top1", epochs("ema_val_top1"), green, true}}},
		{"learning rate", []series{{"lr", lr, blue, perEpoch}}},
	}
	plots := make([]*plot.Plot, len(panels))
	for i, p := range panels {
		pl := plot.New()
		pl.Title.Text = p.title
		pl.X.Label.Text = "step"
		for _, s := range p.lines {
			if len(s.xy) == 0 {
				continue
			}
			l, pts, err := plotter.NewLinePoints(s.xy)
			if err != nil {
				return fmt.Errorf("plot %s: %w", s.name, err)
			}
			l.Color, pts.Color = s.color, s.color
			pl.Add(l)
			if s.points {
				pts.Radius = vg.Points(2)
				pl.Add(pts)
			}
			pl.Legend.Add(s.name, l)
		}
		pl.Legend.Top = p.title == "loss" || p.title == "learning rate"
		plots[i] = pl
	}
	return SavePanels(pngPath, 15*vg.Centimeter, 10*vg.Centimeter, plots)
}

// SavePanels draws plots side by side in one row, each w × h, and saves
// them as one PNG at path (atomically, internal/plotfile).
func SavePanels(path string, w, h vg.Length, plots []*plot.Plot) error {
	img := vgimg.New(w*vg.Length(len(plots)), h)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: len(plots)}
	for i, pl := range plots {
		pl.Draw(tiles.At(dc, i, 0))
	}
	return plotfile.SavePNG(path, img)
}

// stepSeries returns steps.csv's finite training losses and learning rates
// against the step.
func stepSeries(rows []StepRow) (loss, lr plotter.XYs) {
	for _, r := range rows {
		x := float64(r.Step)
		if !math.IsNaN(r.Loss) && !math.IsInf(r.Loss, 0) {
			loss = append(loss, plotter.XY{X: x, Y: r.Loss})
		}
		lr = append(lr, plotter.XY{X: x, Y: r.LR})
	}
	return loss, lr
}

// smoothed is xy's bias-corrected exponential moving average with weight
// beta on the past.
func smoothed(xy plotter.XYs, beta float64) plotter.XYs {
	out := make(plotter.XYs, len(xy))
	var avg float64
	for i, p := range xy {
		avg = beta*avg + (1-beta)*p.Y
		out[i] = plotter.XY{X: p.X, Y: avg / (1 - math.Pow(beta, float64(i+1)))}
	}
	return out
}
