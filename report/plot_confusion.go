package report

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/vitgo/vit/internal/plotfile"
)

// confusionGrid adapts a confusion matrix to plotter.GridXYZ, shading each
// cell by its share of the label's row.
type confusionGrid [][]int

func (g confusionGrid) Dims() (int, int) { return len(g), len(g) }
func (g confusionGrid) X(c int) float64  { return float64(c) }
func (g confusionGrid) Y(r int) float64  { return float64(len(g) - 1 - r) }
func (g confusionGrid) Z(c, r int) float64 {
	row := g[r]
	total := 0
	for _, v := range row {
		total += v
	}
	if total == 0 {
		return 0
	}
	return math.Sqrt(float64(row[c]) / float64(total)) // sqrt shows small confusions
}

// PlotConfusion draws the matrix (rows: label, columns: prediction) with
// the counts written in the cells.
func PlotConfusion(conf [][]int, classes []string, path string) error {
	if len(conf) == 0 {
		return fmt.Errorf("confusion %s: empty matrix", path)
	}
	p := plot.New()
	p.Title.Text = "confusion matrix (rows: label, columns: prediction)"
	pal := palette.Heat(64, 1)
	cols := pal.Colors()
	for i, j := 0, len(cols)-1; i < j; i, j = i+1, j-1 {
		cols[i], cols[j] = cols[j], cols[i]
	}
	hm := plotter.NewHeatMap(confusionGrid(conf), customPalette(cols))
	hm.Min, hm.Max = 0, 1
	p.Add(hm)
	var labels plotter.XYLabels
	for r, row := range conf {
		for c, v := range row {
			labels.XYs = append(labels.XYs, plotter.XY{X: float64(c), Y: float64(len(conf) - 1 - r)})
			labels.Labels = append(labels.Labels, fmt.Sprint(v))
		}
	}
	lab, err := plotter.NewLabels(labels)
	if err != nil {
		return err
	}
	for i := range lab.TextStyle {
		lab.TextStyle[i].XAlign, lab.TextStyle[i].YAlign = draw.XCenter, draw.YCenter
		lab.TextStyle[i].Color = color.Black
		lab.TextStyle[i].Font.Size = vg.Points(7)
	}
	p.Add(lab)
	var xt, yt []plot.Tick
	for i := range conf {
		n := fmt.Sprint(i)
		if i < len(classes) {
			n = classes[i]
		}
		xt = append(xt, plot.Tick{Value: float64(i), Label: n})
		yt = append(yt, plot.Tick{Value: float64(len(conf) - 1 - i), Label: n})
	}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.ConstantTicks(xt), plot.ConstantTicks(yt)
	p.X.Label.Text, p.Y.Label.Text = "prediction", "label"
	side := vg.Length(14+len(conf)) * vg.Centimeter / 1.5
	c := vgimg.New(side, side)
	p.Draw(draw.New(c))
	return plotfile.SavePNG(path, c)
}

type customPalette []color.Color

func (p customPalette) Colors() []color.Color { return p }
