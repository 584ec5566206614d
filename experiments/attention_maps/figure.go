package main

import (
	"fmt"
	"image"
	"image/color"

	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/vitgo/vit/experiments/internal/harness"
	"github.com/vitgo/vit/internal/plotfile"
)

// digit is one test image with its maps, each (h, w) after upsampling.
type digit struct {
	Pix         []uint8 // (h, w) grayscale
	Label, Pred int
	CLS, Roll   []float64 // (h, w) attention, any scale
}

const zoom = 4 // screen pixels per image pixel

// gray renders pix at zoom× with nearest-neighbour blocks.
func gray(pix []uint8, h, w int) *image.RGBA {
	return render(h, w, func(i int) color.RGBA { v := pix[i]; return color.RGBA{v, v, v, 255} })
}

// overlay blends the image with a colour map of m scaled to [0, 1] by its
// maximum: colour·α + gray·(1−α).
func overlay(pix []uint8, m []float64, h, w int, cm palette.ColorMap) *image.RGBA {
	hi := 0.0
	for _, v := range m {
		hi = max(hi, v)
	}
	const alpha = 0.6
	return render(h, w, func(i int) color.RGBA {
		v := 0.0
		if hi > 0 {
			v = m[i] / hi
		}
		c, err := cm.At(min(max(v, 0), 1))
		if err != nil {
			c = color.Black
		}
		r, g, b, _ := c.RGBA()
		p := float64(pix[i])
		mix := func(x uint32) uint8 { return uint8(alpha*float64(x>>8) + (1-alpha)*p + 0.5) }
		return color.RGBA{mix(r), mix(g), mix(b), 255}
	})
}

func render(h, w int, at func(i int) color.RGBA) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w*zoom, h*zoom))
	for y := range h * zoom {
		for x := range w * zoom {
			img.SetRGBA(x, y, at((y/zoom)*w+x/zoom))
		}
	}
	return img
}

// plotDigits draws a grid with one column per digit and three rows: the
// image, its last-layer CLS attention overlay, its rollout overlay.
func plotDigits(ds []digit, h, w int, title, path string) error {
	cm := moreland.ExtendedBlackBody()
	cm.SetMin(0)
	cm.SetMax(1)
	rows := []string{"image", "last-layer\nCLS attention", "attention\nrollout"}
	const tile, pad = 3 * vg.Centimeter, 0.2 * vg.Centimeter
	left, top, head := 2.8*vg.Centimeter, 1.2*vg.Centimeter, 0.8*vg.Centimeter
	W := left + vg.Length(len(ds))*(tile+pad)
	H := top + head + vg.Length(len(rows))*(tile+pad)
	img, dc, small := harness.Figure(W, H, W/2, title)
	for j, d := range ds {
		x := left + vg.Length(j)*(tile+pad)
		lbl := fmt.Sprintf("label %d, pred %d", d.Label, d.Pred)
		dc.FillText(small, vg.Point{X: x + tile/2, Y: H - top - head/2}, lbl)
		for i, im := range []image.Image{gray(d.Pix, h, w), overlay(d.Pix, d.CLS, h, w, cm), overlay(d.Pix, d.Roll, h, w, cm)} {
			y := H - top - head - vg.Length(i+1)*(tile+pad) + pad
			dc.DrawImage(vg.Rectangle{Min: vg.Point{X: x, Y: y}, Max: vg.Point{X: x + tile, Y: y + tile}}, im)
		}
	}
	small.XAlign = draw.XRight
	for i, r := range rows {
		y := H - top - head - vg.Length(i)*(tile+pad) - tile/2
		dc.FillText(small, vg.Point{X: left - 0.3*vg.Centimeter, Y: y}, r)
	}
	return plotfile.SavePNG(path, img)
}
