package data

import "math"

// cropBox is a crop of an image: top row, left column, height, width.
type cropBox struct{ top, left, h, w int }

// rrcAttempts is how many boxes RandomResizedCrop draws before it falls
// back to a central crop (torchvision's 10).
const rrcAttempts = 10

// rrcBox draws torchvision's RandomResizedCrop.get_params box for an h×w
// image: up to ten times, an area of U(scale)·h·w and an aspect ratio
// exp(U(log ratio)) give w' = round(√(area·ratio)), h' = round(√(area/ratio))
// (Python's round, half to even); the first box that fits (0 < w' ≤ w,
// 0 < h' ≤ h) is placed uniformly, top in [0, h−h'] and left in [0, w−w'].
// If none fits, the central crop of the whole image clamped to the ratio
// range: w' = w, h' = round(w/min ratio) when the image is narrower than
// the range, h' = h, w' = round(h·max ratio) when wider, else the whole
// image. The box is at least 1×1 and within the image whatever the ranges
// (a ratio far outside the image's aspect would round a side to 0).
func rrcBox(h, w int, scale, ratio [2]float64, r *rng) cropBox {
	area := float64(h) * float64(w)
	lr0, lr1 := math.Log(ratio[0]), math.Log(ratio[1])
	for range rrcAttempts {
		target := area * r.uniform(scale[0], scale[1])
		aspect := math.Exp(r.uniform(lr0, lr1))
		// Compared as floats first: a side that is NaN or beyond int's
		// range never fits.
		fw := math.RoundToEven(math.Sqrt(target * aspect))
		fh := math.RoundToEven(math.Sqrt(target / aspect))
		if 1 <= fw && fw <= float64(w) && 1 <= fh && fh <= float64(h) {
			bw, bh := int(fw), int(fh)
			top := r.intRange(0, h-bh+1)
			left := r.intRange(0, w-bw+1)
			return cropBox{top, left, bh, bw}
		}
	}
	return rrcFallback(h, w, ratio)
}

// rrcFallback is rrcBox's central crop when no drawn box fits, each side
// clamped to [1, the image's].
func rrcFallback(h, w int, ratio [2]float64) cropBox {
	bh, bw := h, w
	switch in := float64(w) / float64(h); {
	case in < ratio[0]:
		bh = clampSide(math.RoundToEven(float64(w)/ratio[0]), h)
	case in > ratio[1]:
		bw = clampSide(math.RoundToEven(float64(h)*ratio[1]), w)
	}
	return cropBox{(h - bh) / 2, (w - bw) / 2, bh, bw}
}

// clampSide is the side v clamped to [1, n] (NaN: n).
func clampSide(v float64, n int) int {
	switch {
	case v >= float64(n) || math.IsNaN(v):
		return n
	case v < 1:
		return 1
	}
	return int(v)
}

// rrcRatioFits reports whether RandomResizedCrop's aspect-ratio range
// leaves a crop at least one pixel on each side of an h×w image (the
// model's): the fallback rounds w/min ratio and h·max ratio to whole
// pixels, and a side that rounds to 0 is a range no image of that size
// can be cropped to.
func rrcRatioFits(h, w int, ratio [2]float64) bool {
	return math.RoundToEven(float64(w)/ratio[0]) >= 1 && math.RoundToEven(float64(h)*ratio[1]) >= 1
}

// cropImage copies box b of img into dst (grown as needed) and returns the
// cropped image, which aliases dst.
func cropImage(img Image, b cropBox, dst []uint8) (Image, []uint8) {
	dst = growU(dst, img.C*b.h*b.w)
	for ch := 0; ch < img.C; ch++ {
		for y := 0; y < b.h; y++ {
			src := img.Pix[(ch*img.H+b.top+y)*img.W+b.left:]
			copy(dst[(ch*b.h+y)*b.w:(ch*b.h+y+1)*b.w], src[:b.w])
		}
	}
	return Image{C: img.C, H: b.h, W: b.w, Pix: dst}, dst
}

// randomResizedCrop crops img to the box drawn for this sample (its
// resize to the model's size is the pipeline's), or returns img when
// random_resized_crop is off or in evaluation.
func (p *Pipeline) randomResizedCrop(img Image, key func(uint64) *rng, s *scratch) Image {
	if !p.Train || !p.aug.RandomResizedCrop {
		return img
	}
	b := rrcBox(img.H, img.W, p.rrcScale, p.rrcRatio, key(streamRRC))
	img, s.uc = cropImage(img, b, s.uc)
	return img
}
