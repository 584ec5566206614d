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

// CenterCrop is timm's evaluation crop (transforms_imagenet_eval with
// crop_mode "center" and interpolation "bilinear") on a uint8 image: resize
// so that the image covers ⌊h/cropPct⌋×⌊w/cropPct⌋ with its aspect ratio
// kept (for a square target: the short side becomes ⌊h/cropPct⌋, the long
// side ⌊short·long/short_in⌋ as torchvision's Resize), then cut the centred
// h×w window (offsets rounded half to even, as torchvision's CenterCrop).
// The resize is PIL's antialiased bilinear on uint8, rounded back to uint8.
// cropPct must lie in (0, 1].
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
	rh, rw := cropResizeSize(img.H, img.W, h, w, cropPct)
	src := img
	if rh != img.H || rw != img.W {
		f := make([]float32, img.C*rh*rw)
		rs := resizer{aa: true}
		rs.resizeU8(f, img.Pix, &lutIdentity, img.C, img.H, img.W, rh, rw)
		src = Image{C: img.C, H: rh, W: rw, Pix: make([]uint8, len(f))}
		for i, v := range f {
			src.Pix[i] = uint8(min(max(v+0.5, 0), 255))
		}
	}
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
