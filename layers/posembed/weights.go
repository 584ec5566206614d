package posembed

import "math"

// tap is one source sample of an output sample: in[idx] × w.
type tap struct {
	idx int
	w   float64
}

// axisTaps returns, for each of the m output positions along an axis of n
// input samples, the input samples and weights PyTorch's CPU kernel uses.
func axisTaps(n, m int, o Options) [][]tap {
	if o.Antialias {
		if o.Mode == Bilinear {
			return antialiasTaps(n, m, 2, triangle)
		}
		return antialiasTaps(n, m, 4, keysAA)
	}
	switch o.Mode {
	case Bilinear:
		return bilinearTaps(n, m)
	case Nearest:
		return nearestTaps(n, m)
	}
	return bicubicTaps(n, m)
}

// sourceIndex is PyTorch's area_pixel_compute_source_index for
// align_corners=False in float32: scale·(i+0.5) − 0.5, clamped at 0 unless
// cubic.
func sourceIndex(scale float32, i int, cubic bool) float32 {
	x := float32(scale*float32(float32(i)+0.5)) - 0.5
	if !cubic && x < 0 {
		return 0
	}
	return x
}

// bicubicTaps: upsample_bicubic2d, align_corners=False, A = -0.75, the four
// neighbours floor(x)-1 … floor(x)+2 clamped into [0, n-1].
func bicubicTaps(n, m int) [][]tap {
	const a = -0.75
	scale := float32(n) / float32(m)
	taps := make([][]tap, m)
	for i := range taps {
		x := sourceIndex(scale, i, true)
		x0 := int(math.Floor(float64(x)))
		t := float64(x) - float64(x0)
		w := [4]float64{
			cubic2(t+1, a),
			cubic1(t, a),
			cubic1(1-t, a),
			cubic2(2-t, a),
		}
		taps[i] = make([]tap, 4)
		for k := range w {
			taps[i][k] = tap{idx: clamp(x0-1+k, n), w: w[k]}
		}
	}
	return taps
}

// bilinearTaps: upsample_bilinear2d, align_corners=False; the right
// neighbour is clamped to the last sample.
func bilinearTaps(n, m int) [][]tap {
	scale := float32(n) / float32(m)
	taps := make([][]tap, m)
	for i := range taps {
		x := sourceIndex(scale, i, false)
		x0 := int(x) // x ≥ 0, so truncation is floor
		x1 := x0
		if x0 < n-1 {
			x1 = x0 + 1
		}
		l1 := float64(x) - float64(x0)
		taps[i] = []tap{{x0, 1 - l1}, {x1, l1}}
	}
	return taps
}

// nearestTaps: PyTorch's legacy "nearest" (upsample_nearest2d):
// src = min(floor(i·(n/m)), n-1) in float32, with the exact special cases
// m = n and m = 2n.
func nearestTaps(n, m int) [][]tap {
	scale := float32(n) / float32(m)
	taps := make([][]tap, m)
	for i := range taps {
		var src int
		switch {
		case m == n:
			src = i
		case m == 2*n:
			src = i >> 1
		default:
			src = min(int(math.Floor(float64(float32(float32(i)*scale)))), n-1)
		}
		taps[i] = []tap{{src, 1}}
	}
	return taps
}

// antialiasTaps: PyTorch's separable antialiased kernel
// (_compute_weights_aa in aten/src/ATen/native/cpu/UpSampleKernel.cpp).
// The filter of half-width interpSize/2 is stretched by scale = n/m when
// shrinking, cut at the borders and normalised to sum 1.
func antialiasTaps(n, m, interpSize int, filter func(float64) float64) [][]tap {
	scale := float64(n) / float64(m)
	support := float64(interpSize) / 2
	invscale := 1.0
	if scale >= 1 {
		support *= scale
		invscale = 1 / scale
	}
	taps := make([][]tap, m)
	for i := range taps {
		center := scale * (float64(i) + 0.5)
		xmin := max(int(center-support+0.5), 0) // int() truncates toward zero, as in C++
		xmax := min(int(center+support+0.5), n)
		var total float64
		ts := make([]tap, 0, max(xmax-xmin, 0))
		for j := xmin; j < xmax; j++ {
			w := filter((float64(j) - center + 0.5) * invscale)
			ts = append(ts, tap{j, w})
			total += w
		}
		if total != 0 {
			for k := range ts {
				ts[k].w /= total
			}
		}
		taps[i] = ts
	}
	return taps
}

// cubic1 is Keys' cubic convolution kernel for |x| ≤ 1.
func cubic1(x, a float64) float64 { return ((a+2)*x-(a+3))*x*x + 1 }

// cubic2 is Keys' cubic convolution kernel for 1 < |x| < 2.
func cubic2(x, a float64) float64 { return ((a*x-5*a)*x+8*a)*x - 4*a }

// keysAA is the bicubic antialias filter of PyTorch (and PIL): Keys with A = -0.5.
func keysAA(x float64) float64 {
	const a = -0.5
	x = math.Abs(x)
	switch {
	case x < 1:
		return cubic1(x, a)
	case x < 2:
		return cubic2(x, a)
	}
	return 0
}

// triangle is the bilinear antialias filter.
func triangle(x float64) float64 {
	return max(1-math.Abs(x), 0)
}

func clamp(i, n int) int { return min(max(i, 0), n-1) }
