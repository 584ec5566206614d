package data

import (
	"image"
	"image/color"
	"math"
	"testing"

	"github.com/vitgo/vit/internal/interp"
)

// The loader's fast paths must give the numbers of the plain code they
// replace, bit for bit.

func TestYCbCrToRGBMatchesColor(t *testing.T) {
	for y := 0; y < 256; y++ {
		for cb := 0; cb < 256; cb++ {
			for cr := 0; cr < 256; cr++ {
				r, g, b := ycbcrToRGB(uint8(y), uint8(cb), uint8(cr))
				wr, wg, wb := color.YCbCrToRGB(uint8(y), uint8(cb), uint8(cr))
				if r != wr || g != wg || b != wb {
					t.Fatalf("YCbCr(%d,%d,%d) = %d,%d,%d, want %d,%d,%d", y, cb, cr, r, g, b, wr, wg, wb)
				}
			}
		}
	}
}

// TestYCbCrToPlanesMatchesAt compares the row converter with YCbCrAt and
// color.YCbCrToRGB per pixel, for every subsampling, odd sizes and a
// sub-image whose origin is odd.
func TestYCbCrToPlanesMatchesAt(t *testing.T) {
	ratios := []image.YCbCrSubsampleRatio{image.YCbCrSubsampleRatio444, image.YCbCrSubsampleRatio422,
		image.YCbCrSubsampleRatio420, image.YCbCrSubsampleRatio440, image.YCbCrSubsampleRatio411, image.YCbCrSubsampleRatio410}
	r := newRNG(5)
	for _, ratio := range ratios {
		full := image.NewYCbCr(image.Rect(0, 0, 37, 23), ratio)
		for _, p := range [][]uint8{full.Y, full.Cb, full.Cr} {
			for i := range p {
				p[i] = uint8(r.intn(256))
			}
		}
		for _, m := range []*image.YCbCr{full, full.SubImage(image.Rect(3, 5, 30, 20)).(*image.YCbCr)} {
			for _, c := range []int{3, 1} {
				got := toCHW(m, c)
				b := m.Bounds()
				h, w := b.Dy(), b.Dx()
				for y := 0; y < h; y++ {
					for x := 0; x < w; x++ {
						yc := m.YCbCrAt(b.Min.X+x, b.Min.Y+y)
						cr, cg, cb := color.YCbCrToRGB(yc.Y, yc.Cb, yc.Cr)
						want := []uint8{cr, cg, cb}
						if c == 1 {
							want = []uint8{lumaU8(cr, cg, cb)}
						}
						for ch, v := range want {
							if g := got.Pix[ch*h*w+y*w+x]; g != v {
								t.Fatalf("%v %v c=%d: pixel (%d,%d) ch %d = %d, want %d", ratio, b, c, x, y, ch, g, v)
							}
						}
					}
				}
			}
		}
	}
}

// naiveResize is the resize as first written: per output, its taps through
// the index table, along W then H.
func naiveResize(src []float32, c, inH, inW, outH, outW int, aa bool) []float32 {
	taps := func(in, out int) *interp.Taps[float32] {
		if aa {
			return interp.BilinearAA[float32](in, out)
		}
		return interp.Bilinear[float32](in, out)
	}
	tmp := src
	if inW != outW {
		t := taps(inW, outW)
		tmp = make([]float32, c*inH*outW)
		for row := 0; row < c*inH; row++ {
			for o := 0; o < outW; o++ {
				var s float32
				for k := t.Off[o]; k < t.Off[o+1]; k++ {
					s += t.W[k] * src[row*inW+t.Idx[k]]
				}
				tmp[row*outW+o] = s
			}
		}
	}
	if inH == outH {
		return tmp
	}
	t := taps(inH, outH)
	dst := make([]float32, c*outH*outW)
	for ch := 0; ch < c; ch++ {
		for o := 0; o < outH; o++ {
			for x := 0; x < outW; x++ {
				var s float32
				for k := t.Off[o]; k < t.Off[o+1]; k++ {
					s += t.W[k] * tmp[(ch*inH+t.Idx[k])*outW+x]
				}
				dst[(ch*outH+o)*outW+x] = s
			}
		}
	}
	return dst
}

func TestResizeMatchesNaive(t *testing.T) {
	for _, tc := range []struct{ c, inH, inW, outH, outW int }{
		{3, 375, 500, 224, 224}, {3, 500, 375, 224, 224}, {1, 7, 9, 20, 3}, {3, 5, 6, 5, 17}, {1, 13, 13, 13, 13}, {3, 30, 41, 11, 41},
	} {
		img := testImage(tc.c, tc.inH, tc.inW, uint64(tc.inH))
		x := make([]float32, len(img.Pix))
		for i, v := range img.Pix {
			x[i] = lutUnit[v]
		}
		for _, aa := range []bool{false, true} {
			want := naiveResize(x, tc.c, tc.inH, tc.inW, tc.outH, tc.outW, aa)
			got := Resize(x, tc.c, tc.inH, tc.inW, tc.outH, tc.outW, aa)
			var rs resizer
			rs.aa = aa
			gotU8 := make([]float32, len(want))
			rs.resizeU8(gotU8, img.Pix, &lutUnit, tc.c, tc.inH, tc.inW, tc.outH, tc.outW)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) || math.Float32bits(gotU8[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%+v aa=%v: value %d = %v (from uint8 %v), want %v", tc, aa, i, got[i], gotU8[i], want[i])
				}
			}
		}
	}
}

func TestNormalizeTableMatchesArithmetic(t *testing.T) {
	mean, std := []float64{0.485, 0.456, 0.406}, []float64{0.229, 0.224, 0.225}
	p, err := NewPipeline(3, 16, 16, false, 1, DefaultAugmentConfig(), mean, std)
	if err != nil {
		t.Fatal(err)
	}
	img := testImage(3, 16, 16, 9)
	dst := make([]float32, len(img.Pix))
	p.normalize(dst, img.Pix, 0, 0)
	for i, v := range img.Pix {
		ch := i / 256
		want := (float32(v)/255 - float32(mean[ch])) / float32(std[ch])
		if math.Float32bits(dst[i]) != math.Float32bits(want) {
			t.Fatalf("value %d: %v, want %v", i, dst[i], want)
		}
	}
}
