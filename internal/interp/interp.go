// Package interp computes PyTorch's interpolation taps: for each output
// sample along one axis, the input samples and weights that F.interpolate's
// CPU kernels (aten/src/ATen/native/UpSample.h and cpu/UpSampleKernel.cpp)
// combine, with align_corners=False. The image resize in data and the
// pos_embed resampling in layers/posembed both use them.
//
// The source index is computed in float32, as PyTorch does for float
// tensors; the weights are computed in T, float32 for the image pipeline
// (PyTorch's kernel on float tensors) and float64 where the caller
// accumulates in float64.
package interp

import "math"

// Float is a weight type.
type Float interface{ ~float32 | ~float64 }

// Taps holds, for each of Out output samples along an axis of In input
// samples, the input indices Idx[Off[o]:Off[o+1]] and their weights
// W[Off[o]:Off[o+1]], in increasing index order.
type Taps[T Float] struct {
	In, Out int
	Off     []int // len Out+1
	Idx     []int
	W       []T
}

func newTaps[T Float](in, out, perOut int) *Taps[T] {
	return &Taps[T]{In: in, Out: out, Off: make([]int, out+1),
		Idx: make([]int, 0, out*perOut), W: make([]T, 0, out*perOut)}
}

// add appends the tap in[i]·w to the output being built.
func (t *Taps[T]) add(i int, w T) {
	t.Idx = append(t.Idx, i)
	t.W = append(t.W, w)
}

// end closes output o.
func (t *Taps[T]) end(o int) { t.Off[o+1] = len(t.Idx) }

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

// Bilinear returns upsample_bilinear2d's taps: i0 = ⌊x⌋, i1 = min(i0+1,
// in−1), weights (1−λ, λ) with λ = x − i0.
func Bilinear[T Float](in, out int) *Taps[T] {
	t := newTaps[T](in, out, 2)
	scale := float32(in) / float32(out)
	for o := range out {
		x := sourceIndex(scale, o, false)
		i0 := min(int(x), in-1) // x ≥ 0, so truncation is floor
		l1 := min(T(x)-T(i0), 1)
		i1 := i0
		if i0 < in-1 {
			i1 = i0 + 1
		}
		t.add(i0, 1-l1)
		t.add(i1, l1)
		t.end(o)
	}
	return t
}

// Bicubic returns upsample_bicubic2d's taps: Keys' cubic with A = −0.75 on
// the four neighbours ⌊x⌋−1 … ⌊x⌋+2, clamped into [0, in−1].
func Bicubic[T Float](in, out int) *Taps[T] {
	const a = -0.75
	t := newTaps[T](in, out, 4)
	scale := float32(in) / float32(out)
	for o := range out {
		x := sourceIndex(scale, o, true)
		x0 := int(math.Floor(float64(x)))
		f := T(x) - T(x0)
		w := [4]T{cubic2(f+1, a), cubic1(f, a), cubic1(1-f, a), cubic2(2-f, a)}
		for k := range w {
			t.add(min(max(x0-1+k, 0), in-1), w[k])
		}
		t.end(o)
	}
	return t
}

// Nearest returns the legacy "nearest" taps (upsample_nearest2d):
// src = min(⌊o·(in/out)⌋, in−1) in float32, with PyTorch's exact special
// cases out = in and out = 2·in.
func Nearest[T Float](in, out int) *Taps[T] {
	t := newTaps[T](in, out, 1)
	scale := float32(in) / float32(out)
	for o := range out {
		var src int
		switch {
		case out == in:
			src = o
		case out == 2*in:
			src = o >> 1
		default:
			src = min(int(math.Floor(float64(float32(float32(o)*scale)))), in-1)
		}
		t.add(src, 1)
		t.end(o)
	}
	return t
}

// BilinearAA returns the taps of the antialiased bilinear kernel
// (_upsample_bilinear2d_aa, and PIL's resize): a triangle filter.
func BilinearAA[T Float](in, out int) *Taps[T] { return antialias(in, out, 2, triangle[T]) }

// BicubicAA returns the taps of the antialiased bicubic kernel
// (_upsample_bicubic2d_aa, and PIL's): Keys' cubic with A = −0.5.
func BicubicAA[T Float](in, out int) *Taps[T] { return antialias(in, out, 4, keysAA[T]) }

// antialias is PyTorch's separable antialiased kernel (_compute_weights_aa):
// the filter of half-width interpSize/2 is stretched by scale = in/out when
// shrinking, cut at the borders and normalised to sum 1.
func antialias[T Float](in, out, interpSize int, filter func(T) T) *Taps[T] {
	scale := T(in) / T(out)
	support := T(interpSize) / 2
	invscale := T(1)
	if scale >= 1 {
		support *= scale
		invscale = 1 / scale
	}
	t := newTaps[T](in, out, int(2*support)+2)
	for o := range out {
		center := scale * (T(o) + 0.5)
		xmin := max(int(center-support+0.5), 0) // int() truncates toward zero, as in C++
		xmax := min(int(center+support+0.5), in)
		start := len(t.W)
		var total T
		for j := xmin; j < xmax; j++ {
			w := filter((T(j) - center + 0.5) * invscale)
			t.add(j, w)
			total += w
		}
		if total != 0 {
			for k := start; k < len(t.W); k++ {
				t.W[k] /= total
			}
		}
		t.end(o)
	}
	return t
}

// cubic1 is Keys' cubic convolution kernel for |x| ≤ 1.
func cubic1[T Float](x, a T) T { return ((a+2)*x-(a+3))*x*x + 1 }

// cubic2 is Keys' cubic convolution kernel for 1 < |x| < 2.
func cubic2[T Float](x, a T) T { return ((a*x-5*a)*x+8*a)*x - 4*a }

// keysAA is the bicubic antialias filter of PyTorch (and PIL): Keys with A = −0.5.
func keysAA[T Float](x T) T {
	const a = -0.5
	x = T(math.Abs(float64(x)))
	switch {
	case x < 1:
		return cubic1(x, a)
	case x < 2:
		return cubic2(x, a)
	}
	return 0
}

// triangle is the bilinear antialias filter.
func triangle[T Float](x T) T { return max(1-T(math.Abs(float64(x))), 0) }
