package harness

import (
	"image/color"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// The chart pieces the experiments' figures repeat. Each adds to p in the
// order the figures were first drawn in, so a figure drawn through them is
// byte for byte the one drawn by hand.

// LinePoints adds xy to p as a line with points, both in colour c, with a
// legend entry named name ("" = none). The line and glyphs are returned
// for further styling.
func LinePoints(p *plot.Plot, name string, c color.Color, xy plotter.XYs) (*plotter.Line, *plotter.Scatter, error) {
	l, s, err := plotter.NewLinePoints(xy)
	if err != nil {
		return nil, nil, err
	}
	l.Color, s.Color = c, c
	p.Add(l, s)
	if name != "" {
		p.Legend.Add(name, l, s)
	}
	return l, s, nil
}

// Bars adds series i of n to p as grouped bars of width w: one bar per
// nominal x, shifted so the n series sit side by side, in plotutil.Color(i),
// without outline, with a legend entry. under, when not nil, is a bar chart
// (not drawn) the bars stand on.
func Bars(p *plot.Plot, name string, i, n int, w vg.Length, v plotter.Values, under plotter.Values) (*plotter.BarChart, error) {
	b, err := plotter.NewBarChart(v, w)
	if err != nil {
		return nil, err
	}
	off := vg.Length(float64(i)-float64(n-1)/2) * w
	if under != nil {
		u, err := plotter.NewBarChart(under, w)
		if err != nil {
			return nil, err
		}
		u.Offset = off
		b.StackOn(u)
	}
	b.Offset = off
	b.Color = plotutil.Color(i)
	b.LineStyle.Width = 0
	p.Add(b)
	p.Legend.Add(name, b)
	return b, nil
}

// Labels adds text labels to p shifted by off; style, when not nil, edits
// each label's text style.
func Labels(p *plot.Plot, ls plotter.XYLabels, off vg.Point, style func(*text.Style)) error {
	l, err := plotter.NewLabels(ls)
	if err != nil {
		return err
	}
	for i := range l.TextStyle {
		if style != nil {
			style(&l.TextStyle[i])
		}
	}
	l.Offset = off
	p.Add(l)
	return nil
}

// Figure is a white w × h canvas for a hand-laid figure with title in 13 pt
// centred on titleX, 0.3 cm below the top edge. small is the 10 pt style,
// centred both ways, for the figure's row and column labels.
func Figure(w, h, titleX vg.Length, title string) (img *vgimg.Canvas, dc draw.Canvas, small text.Style) {
	img = vgimg.New(w, h)
	dc = draw.New(img)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	sty := text.Style{Color: color.Black, Font: font.From(plot.DefaultFont, 13), XAlign: draw.XCenter,
		YAlign: draw.YTop, Handler: plot.DefaultTextHandler}
	dc.FillText(sty, vg.Point{X: titleX, Y: h - 0.3*vg.Centimeter}, title)
	small = sty
	small.Font = font.From(plot.DefaultFont, 10)
	small.YAlign = draw.YCenter
	return img, dc, small
}

// Integers are ticks at from, from+step, … up to to, each labelled with
// its value.
func Integers(from, to, step int) plot.ConstantTicks {
	var ts plot.ConstantTicks
	for v := from; v <= to; v += step {
		ts = append(ts, plot.Tick{Value: float64(v), Label: strconv.Itoa(v)})
	}
	return ts
}
