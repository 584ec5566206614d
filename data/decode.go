package data

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	_ "image/gif"  // register GIF
	_ "image/jpeg" // register JPEG
	_ "image/png"  // register PNG
	"os"
)

// decodeImageFile reads and decodes the PNG, JPEG or GIF file at path into a
// CHW uint8 image of c channels (1: PIL "L" luma, 3: RGB; alpha dropped).
func decodeImageFile(path string, c int) (Image, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Image{}, err
	}
	img, _, err := image.Decode(bytes.NewReader(b))
	if err != nil {
		return Image{}, fmt.Errorf("decode %s: %w", path, err)
	}
	return toCHW(img, c), nil
}

// toCHW converts a decoded image to CHW uint8 with c channels. Alpha is
// dropped as PIL's convert("RGB") does: the stored (non-premultiplied) colour
// is kept.
func toCHW(img image.Image, c int) Image {
	r := img.Bounds()
	h, w := r.Dy(), r.Dx()
	hw := h * w
	out := Image{C: c, H: h, W: w, Pix: make([]uint8, c*hw)}
	if g, ok := img.(*image.Gray); ok {
		for y := 0; y < h; y++ {
			row := g.Pix[y*g.Stride : y*g.Stride+w]
			for ch := 0; ch < c; ch++ {
				copy(out.Pix[ch*hw+y*w:], row)
			}
		}
		return out
	}
	var R, G, B []uint8
	if c == 3 {
		R, G, B = out.Pix[:hw], out.Pix[hw:2*hw], out.Pix[2*hw:]
	}
	put := func(i int, cr, cg, cb uint8) {
		if c == 3 {
			R[i], G[i], B[i] = cr, cg, cb
		} else {
			out.Pix[i] = lumaU8(cr, cg, cb)
		}
	}
	switch m := img.(type) {
	case *image.NRGBA:
		for y := 0; y < h; y++ {
			row := m.Pix[y*m.Stride:]
			for x := 0; x < w; x++ {
				put(y*w+x, row[4*x], row[4*x+1], row[4*x+2])
			}
		}
	case *image.RGBA:
		for y := 0; y < h; y++ {
			row := m.Pix[y*m.Stride:]
			for x := 0; x < w; x++ {
				if a := row[4*x+3]; a != 0xff {
					n := color.NRGBAModel.Convert(color.RGBA{row[4*x], row[4*x+1], row[4*x+2], a}).(color.NRGBA)
					put(y*w+x, n.R, n.G, n.B)
					continue
				}
				put(y*w+x, row[4*x], row[4*x+1], row[4*x+2])
			}
		}
	case *image.YCbCr:
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				yc := m.YCbCrAt(r.Min.X+x, r.Min.Y+y)
				cr, cg, cb := color.YCbCrToRGB(yc.Y, yc.Cb, yc.Cr)
				put(y*w+x, cr, cg, cb)
			}
		}
	case *image.Paletted:
		pal := make([]color.NRGBA, len(m.Palette))
		for i, pc := range m.Palette {
			pal[i] = color.NRGBAModel.Convert(pc).(color.NRGBA)
		}
		for y := 0; y < h; y++ {
			row := m.Pix[y*m.Stride:]
			for x := 0; x < w; x++ {
				var p color.NRGBA
				if int(row[x]) < len(pal) {
					p = pal[row[x]]
				}
				put(y*w+x, p.R, p.G, p.B)
			}
		}
	default:
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				n := color.NRGBAModel.Convert(img.At(r.Min.X+x, r.Min.Y+y)).(color.NRGBA)
				put(y*w+x, n.R, n.G, n.B)
			}
		}
	}
	return out
}
