package data

import (
	"fmt"
	"image"
	"math"
)

// FromImage converts a decoded image of any colour model to a CHW uint8
// Image of c channels, as Open does for image files: 1 is PIL's "L" luma,
// 3 is RGB with gray replicated; alpha is dropped (the stored colour kept,
// as PIL's convert("RGB") does).
func FromImage(img image.Image, c int) (Image, error) {
	if c != 1 && c != 3 {
		return Image{}, fmt.Errorf("data: channels must be 1 or 3, got %d", c)
	}
	if img == nil {
		return Image{}, fmt.Errorf("data: nil image")
	}
	if r := img.Bounds(); r.Dx() <= 0 || r.Dy() <= 0 {
		return Image{}, fmt.Errorf("data: empty image (%dx%d)", r.Dx(), r.Dy())
	}
	return toCHW(img, c), nil
}

// CheckPixels returns an *ImageTooLargeError naming path when a header read
// by image.DecodeConfig claims more than maxPixels pixels (0 =
// DefaultMaxPixels, the data.max_pixels default), or an error for an empty
// image: the check Open applies to folder images, for other decoders.
func CheckPixels(path string, cfg image.Config, maxPixels int64) error {
	return checkPixels(path, cfg, maxPixels)
}

// MaxCropResizePixels bounds the image CenterCrop resizes before it crops:
// 2^27 pixels, above an 8192-pixel side at crop_pct 0.875.
const MaxCropResizePixels = 1 << 27

// CenterCrop is timm's evaluation crop (transforms_imagenet_eval with
// crop_mode "center" and interpolation "bilinear") on a uint8 image: resize
// so that the image covers ⌊h/cropPct⌋×⌊w/cropPct⌋ with its aspect ratio
// kept (for a square target: the short side becomes ⌊h/cropPct⌋, the long
// side ⌊short·long/short_in⌋ as torchvision's Resize), then cut the centred
// h×w window (offsets rounded half to even, as torchvision's CenterCrop).
// The resize is PIL's bilinear resize (antialiased, fixed-point, uint8
// between its horizontal and vertical passes), bit for bit.
// cropPct must lie in (0, 1], and the resized image (which it divides the
// target by) hold at most MaxCropResizePixels pixels.
func CenterCrop(img Image, h, w int, cropPct float64) (Image, error) {
	if !(cropPct > 0 && cropPct <= 1) {
		return Image{}, fmt.Errorf("data: crop_pct must be in (0, 1], got %v", cropPct)
	}
	if h <= 0 || w <= 0 {
		return Image{}, fmt.Errorf("data: crop size must be positive, got %dx%d", h, w)
	}
	if img.H <= 0 || img.W <= 0 || len(img.Pix) != img.C*img.H*img.W {
		return Image{}, fmt.Errorf("data: image of %dx%dx%d has %d pixels", img.C, img.H, img.W, len(img.Pix))
	}
	// The sizes in float64 first: a tiny crop_pct (1e-300) or a sliver of
	// an image would otherwise overflow int or exhaust memory.
	fh, fw := math.Floor(float64(h)/cropPct), math.Floor(float64(w)/cropPct)
	long := math.Max(fh, fw) * math.Max(float64(img.H)/float64(img.W), float64(img.W)/float64(img.H))
	if n := math.Max(fh, fw) * long; !(n <= MaxCropResizePixels) {
		return Image{}, fmt.Errorf("data: crop_pct %v resizes the %dx%d image to about %.3g pixels before the %dx%d crop, more than %d", cropPct, img.W, img.H, n, w, h, MaxCropResizePixels)
	}
	rh, rw := cropResizeSize(img.H, img.W, h, w, cropPct)
	src := pilResizeBilinear(img, rh, rw)
	top := int(math.RoundToEven(float64(rh-h) / 2))
	left := int(math.RoundToEven(float64(rw-w) / 2))
	out := Image{C: img.C, H: h, W: w, Pix: make([]uint8, img.C*h*w)}
	for ch := 0; ch < img.C; ch++ {
		for y := 0; y < h; y++ {
			sy := y + top
			if sy < 0 || sy >= rh {
				continue // zero padding, as torchvision pads a crop larger than the image
			}
			for x := 0; x < w; x++ {
				if sx := x + left; sx >= 0 && sx < rw {
					out.Pix[(ch*h+y)*w+x] = src.Pix[(ch*rh+sy)*rw+sx]
				}
			}
		}
	}
	return out, nil
}

// cropResizeSize is the size timm resizes an inH×inW image to before its
// centre crop to h×w.
func cropResizeSize(inH, inW, h, w int, cropPct float64) (int, int) {
	sh, sw := int(math.Floor(float64(h)/cropPct)), int(math.Floor(float64(w)/cropPct))
	if sh == sw { // torchvision Resize(int): the short side becomes sh
		if inH <= inW {
			return sh, max(1, int(float64(sh)*float64(inW)/float64(inH)))
		}
		return max(1, int(float64(sh)*float64(inH)/float64(inW))), sh
	}
	// timm's ResizeKeepRatio(longest=0): the smaller ratio scales both sides.
	ratio := math.Min(float64(inH)/float64(sh), float64(inW)/float64(sw))
	return max(1, int(math.RoundToEven(float64(inH)/ratio))), max(1, int(math.RoundToEven(float64(inW)/ratio)))
}

// pilBits is PIL's PRECISION_BITS for 8-bit resampling.
const pilBits = 32 - 8 - 2

// pilTaps are PIL's fixed-point bilinear coefficients along one axis
// (precompute_coeffs and normalize_coeffs_8bpc in Resample.c): output o
// reads inputs first[o] … first[o]+len(k[o])−1.
func pilTaps(in, out int) (first []int, k [][]int) {
	scale := float64(in) / float64(out)
	filterscale := max(scale, 1)
	support := filterscale // the bilinear filter's support is 1
	for o := 0; o < out; o++ {
		center := (float64(o) + 0.5) * scale
		xmin := max(int(center-support+0.5), 0)
		xmax := min(int(center+support+0.5), in)
		w := make([]float64, xmax-xmin)
		var ww float64
		for j := range w {
			x := math.Abs((float64(j+xmin) - center + 0.5) / filterscale)
			if x < 1 {
				w[j] = 1 - x
			}
			ww += w[j]
		}
		fixed := make([]int, len(w))
		for j, v := range w {
			if ww != 0 {
				v /= ww
			}
			if v < 0 {
				fixed[j] = int(-0.5 + v*(1<<pilBits))
			} else {
				fixed[j] = int(0.5 + v*(1<<pilBits))
			}
		}
		first = append(first, xmin)
		k = append(k, fixed)
	}
	return first, k
}

func pilClip8(v int) uint8 {
	if v >= 1<<pilBits<<8 {
		return 255
	}
	if v <= 0 {
		return 0
	}
	return uint8(v >> pilBits)
}

// pilResizeBilinear is PIL's Image.resize((w, h), BILINEAR) of a uint8 CHW
// image: a horizontal pass, then a vertical pass on its uint8 result, each
// skipped when its size does not change.
func pilResizeBilinear(img Image, h, w int) Image {
	c := img.C
	src := img
	if w != img.W {
		first, k := pilTaps(img.W, w)
		out := Image{C: c, H: img.H, W: w, Pix: make([]uint8, c*img.H*w)}
		for row := 0; row < c*img.H; row++ {
			in := src.Pix[row*img.W : (row+1)*img.W]
			dst := out.Pix[row*w : (row+1)*w]
			for o := range dst {
				s := 1 << (pilBits - 1)
				for j, kv := range k[o] {
					s += int(in[first[o]+j]) * kv
				}
				dst[o] = pilClip8(s)
			}
		}
		src = out
	}
	if h != img.H {
		first, k := pilTaps(img.H, h)
		out := Image{C: c, H: h, W: w, Pix: make([]uint8, c*h*w)}
		for ch := 0; ch < c; ch++ {
			in := src.Pix[ch*img.H*w : (ch+1)*img.H*w]
			dst := out.Pix[ch*h*w : (ch+1)*h*w]
			for o := 0; o < h; o++ {
				for x := 0; x < w; x++ {
					s := 1 << (pilBits - 1)
					for j, kv := range k[o] {
						s += int(in[(first[o]+j)*w+x]) * kv
					}
					dst[o*w+x] = pilClip8(s)
				}
			}
		}
		src = out
	}
	return src
}
