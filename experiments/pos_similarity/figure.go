package main

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/vitgo/vit/experiments/internal/harness"
	"github.com/vitgo/vit/internal/plotfile"
)

// tileGrid is one position's similarity to every position, shaped as the
// patch grid, row 0 drawn at the top.
type tileGrid struct {
	p   posSim
	pos int
}

func (g tileGrid) Dims() (c, r int)   { return g.p.GW, g.p.GH }
func (g tileGrid) X(c int) float64    { return float64(c) }
func (g tileGrid) Y(r int) float64    { return float64(g.p.GH - 1 - r) }
func (g tileGrid) Z(c, r int) float64 { n := g.p.GH * g.p.GW; return g.p.Sim[g.pos*n+r*g.p.GW+c] }

// plotGrid draws the ViT paper's Fig. 7 (center) layout: for each patch
// position (row, column) a small heat map of its cosine similarity to every
// position, the tiles arranged on the patch grid, colours from −1 to 1.
func plotGrid(p posSim, title, path string) error {
	cm := moreland.SmoothBlueRed()
	cm.SetMin(-1)
	cm.SetMax(1)
	pal := cm.Palette(255)
	const tile, pad = 2.2 * vg.Centimeter, 0.15 * vg.Centimeter
	gridW := vg.Length(p.GW)*tile + vg.Length(p.GW-1)*pad
	gridH := vg.Length(p.GH)*tile + vg.Length(p.GH-1)*pad
	top, left, right, bottom := 1.4*vg.Centimeter, 1.0*vg.Centimeter, 3.2*vg.Centimeter, 1.0*vg.Centimeter
	img, dc, small := harness.Figure(left+gridW+right, bottom+gridH+top, left+gridW/2, title)
	for c := range p.GW {
		x := left + vg.Length(c)*(tile+pad) + tile/2
		dc.FillText(small, vg.Point{X: x, Y: bottom / 2}, fmt.Sprint(c+1))
	}
	small.XAlign = draw.XRight
	for r := range p.GH {
		y := bottom + gridH - vg.Length(r)*(tile+pad) - tile/2
		dc.FillText(small, vg.Point{X: left - 0.2*vg.Centimeter, Y: y}, fmt.Sprint(r+1))
	}
	for r := range p.GH {
		for c := range p.GW {
			x0 := left + vg.Length(c)*(tile+pad)
			y0 := bottom + gridH - vg.Length(r+1)*tile - vg.Length(r)*pad
			sub := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{Min: vg.Point{X: x0, Y: y0}, Max: vg.Point{X: x0 + tile, Y: y0 + tile}}}
			pl := plot.New()
			pl.HideAxes()
			pl.X.Padding, pl.Y.Padding = 0, 0
			hm := plotter.NewHeatMap(tileGrid{p: p, pos: r*p.GW + c}, pal)
			hm.Min, hm.Max = -1, 1
			pl.Add(hm)
			pl.Draw(sub)
		}
	}
	// Colour bar on the right.
	cb := plot.New()
	cb.HideX()
	cb.Y.Label.Text = "cosine similarity"
	cb.Add(&plotter.ColorBar{ColorMap: cm, Vertical: true})
	x0 := left + gridW + 0.6*vg.Centimeter
	cb.Draw(draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
		Min: vg.Point{X: x0, Y: bottom}, Max: vg.Point{X: x0 + 2.4*vg.Centimeter, Y: bottom + gridH}}})

	return plotfile.SavePNG(path, img)
}
