package data

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	_ "image/gif"  // register GIF
	_ "image/jpeg" // register JPEG
	_ "image/png"  // register PNG
	"io"
	"sync"

	"github.com/vitgo/vit/internal/regfile"
)

// ImageTooLargeError is returned for an image whose header claims more
// pixels than data.max_pixels allows; it is refused before decoding.
type ImageTooLargeError struct {
	Path          string
	Width, Height int
	Limit         int64
}

func (e *ImageTooLargeError) Error() string {
	return fmt.Sprintf("image %s is %dx%d = %d pixels, over data.max_pixels %d (refused before decoding)",
		e.Path, e.Width, e.Height, int64(e.Width)*int64(e.Height), e.Limit)
}

// checkPixels checks a decoded header against maxPixels (0 = DefaultMaxPixels).
func checkPixels(path string, cfg image.Config, maxPixels int64) error {
	if maxPixels <= 0 {
		maxPixels = DefaultMaxPixels
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return fmt.Errorf("decode image %s: empty image %dx%d", path, cfg.Width, cfg.Height)
	}
	if int64(cfg.Width)*int64(cfg.Height) > maxPixels {
		return &ImageTooLargeError{Path: path, Width: cfg.Width, Height: cfg.Height, Limit: maxPixels}
	}
	return nil
}

// decodeJPEG, when set (by a build with -tags jpegturbo), decodes JPEG
// files of the given size into CHW uint8 of c channels instead of
// image/jpeg; ok false hands the file to the standard library.
var decodeJPEG func(b []byte, c, width, height int) (img Image, ok bool, err error)

// JPEGDecoder returns the JPEG decoder of this build: "image/jpeg" (Go's
// standard library), or "libjpeg-turbo" in a build with -tags jpegturbo.
func JPEGDecoder() string { return jpegDecoderName }

// decodeImageFile reads and decodes the PNG, JPEG or GIF file at path into a
// CHW uint8 image of c channels (1: PIL "L" luma, 3: RGB; alpha dropped),
// with no budget. See decodeImageFileIn.
func decodeImageFile(path string, c int, maxPixels int64) (Image, error) {
	img, _, err := decodeImageFileIn(path, c, maxPixels, nil)
	return img, err
}

// decodeImageFileIn decodes the image file at path after CheckEncoded has
// refused, from its header, one over maxPixels (0 = DefaultMaxPixels), over
// the decoded-bytes limit, or claiming more than its bytes can hold. With a
// budget, the decode first waits for its Header.Cost, and returns how much
// it holds: the caller releases it once the pixels are consumed.
func decodeImageFileIn(path string, c int, maxPixels int64, budget *Budget) (Image, int64, error) {
	f, st, err := regfile.Open(path)
	if err != nil {
		return Image{}, 0, err
	}
	if limit := MaxDecodedBytes(maxPixels); st.Size() > limit {
		f.Close()
		return Image{}, 0, fmt.Errorf("image %s: the file has %d bytes, more than the decoded-bytes limit %d (%d × data.max_pixels)", path, st.Size(), limit, BytesPerMaxPixel)
	}
	b, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return Image{}, 0, fmt.Errorf("read %s: %w", path, err)
	}
	hdr, err := CheckEncoded(path, b, maxPixels)
	if err != nil {
		return Image{}, 0, err
	}
	var held int64
	if budget != nil {
		if held, err = budget.Acquire(context.Background(), hdr.Cost); err != nil {
			return Image{}, 0, err
		}
	}
	img, err := decodeChecked(path, b, hdr, c)
	if err != nil {
		budget.Release(held)
		return Image{}, 0, err
	}
	return img, held, nil
}

// decodeChecked decodes b, whose header CheckEncoded accepted as hdr.
func decodeChecked(path string, b []byte, hdr Header, c int) (Image, error) {
	if decodeJPEG != nil && hdr.Format == "jpeg" {
		img, ok, err := decodeJPEG(b, c, hdr.Config.Width, hdr.Config.Height)
		if err != nil {
			return Image{}, fmt.Errorf("decode %s: %w", path, err)
		}
		if ok {
			return img, nil
		}
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
	out := Image{C: c, H: h, W: w, Pix: getPix(c * hw)}
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
		if ycbcrToPlanes(out, m) {
			return out
		}
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

// ycbcrToPlanes converts m into out (c = 1 or 3 planes of m's size) row by
// row with color.YCbCrToRGB's arithmetic, for the chroma subsamplings JPEG
// files use (4:4:4, 4:2:2, 4:2:0, 4:4:0); it reports false, writing nothing,
// for the others.
func ycbcrToPlanes(out Image, m *image.YCbCr) bool {
	var sx, sy int // chroma = luma >> (sx, sy)
	switch m.SubsampleRatio {
	case image.YCbCrSubsampleRatio444:
	case image.YCbCrSubsampleRatio422:
		sx = 1
	case image.YCbCrSubsampleRatio420:
		sx, sy = 1, 1
	case image.YCbCrSubsampleRatio440:
		sy = 1
	default:
		return false
	}
	r := m.Rect
	h, w, hw := out.H, out.W, out.H*out.W
	// Chroma sample of pixel (x, y) in m's coordinates: (x>>sx − r.Min.X>>sx, y>>sy − r.Min.Y>>sy), as COffset.
	cx0, cy0 := r.Min.X>>sx, r.Min.Y>>sy
	for y := 0; y < h; y++ {
		ay := r.Min.Y + y
		yrow := m.Y[y*m.YStride : y*m.YStride+w]
		crow := (ay>>sy - cy0) * m.CStride
		cbRow, crRow := m.Cb[crow:], m.Cr[crow:]
		if out.C != 3 {
			for x, yv := range yrow {
				ci := (r.Min.X+x)>>sx - cx0
				out.Pix[y*w+x] = lumaU8(ycbcrToRGB(yv, cbRow[ci], crRow[ci]))
			}
			continue
		}
		R := out.Pix[y*w : y*w+w]
		G := out.Pix[hw+y*w : hw+y*w+w]
		B := out.Pix[2*hw+y*w : 2*hw+y*w+w]
		for x, yv := range yrow {
			ci := (r.Min.X+x)>>sx - cx0
			// color.YCbCrToRGB's arithmetic, inlined.
			yy1 := int32(yv) * 0x10101
			cb1 := int32(cbRow[ci]) - 128
			cr1 := int32(crRow[ci]) - 128
			R[x] = clamp16(yy1 + 91881*cr1)
			G[x] = clamp16(yy1 - 22554*cb1 - 46802*cr1)
			B[x] = clamp16(yy1 + 116130*cb1)
		}
	}
	return true
}

// clamp16 is color.YCbCrToRGB's rounding: v>>16 clamped to [0, 255].
func clamp16(v int32) uint8 {
	if uint32(v)&0xff000000 == 0 {
		return uint8(v >> 16)
	}
	return uint8(^(v >> 31))
}

// ycbcrToRGB is color.YCbCrToRGB, written out (TestYCbCrToRGBMatchesColor
// compares all 2²⁴ inputs).
func ycbcrToRGB(y, cb, cr uint8) (uint8, uint8, uint8) {
	yy1 := int32(y) * 0x10101
	cb1 := int32(cb) - 128
	cr1 := int32(cr) - 128
	return clamp16(yy1 + 91881*cr1), clamp16(yy1 - 22554*cb1 - 46802*cr1), clamp16(yy1 + 116130*cb1)
}

// pixPool recycles the pixel buffers of decoded folder images: the loader
// hands each image back (Folder.releasePix) once its transform has read it,
// which saves the garbage collector most of a JPEG's allocations.
var pixPool sync.Pool // of *[]uint8

// getPix returns a buffer of n bytes, from the pool when one is large
// enough; its contents are stale, the caller writes every byte.
func getPix(n int) []uint8 {
	if p, ok := pixPool.Get().(*[]uint8); ok && cap(*p) >= n {
		return (*p)[:n]
	}
	return make([]uint8, n)
}

// putPix gives b back to the pool; b must not be used afterwards.
func putPix(b []uint8) {
	if cap(b) > 0 {
		pixPool.Put(&b)
	}
}
