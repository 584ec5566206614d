package data

import "math"

// axisTaps holds, for each output index along one axis, the input indices and
// weights that produce it. Weights are float32 and computed in float32, as
// PyTorch's CPU kernels do for float tensors.
type axisTaps struct {
	in, out int
	aa      bool
	off     []int // taps of output o are idx[off[o]:off[o+1]]
	idx     []int
	w       []float32
}

// bilinearTaps follows PyTorch's upsample_bilinear2d with
// align_corners=False: scale = in/out, src = (o+0.5)·scale − 0.5 clamped at 0,
// i0 = ⌊src⌋, i1 = min(i0+1, in−1), weights (1−λ, λ).
func bilinearTaps(in, out int) *axisTaps {
	t := &axisTaps{in: in, out: out, off: make([]int, out+1)}
	scale := float32(in) / float32(out)
	for o := 0; o < out; o++ {
		src := scale*(float32(o)+0.5) - 0.5
		if src < 0 {
			src = 0
		}
		i0 := int(src)
		if i0 > in-1 {
			i0 = in - 1
		}
		l1 := src - float32(i0)
		if l1 > 1 {
			l1 = 1
		}
		i1 := i0
		if i0 < in-1 {
			i1 = i0 + 1
		}
		t.idx = append(t.idx, i0, i1)
		t.w = append(t.w, 1-l1, l1)
		t.off[o+1] = len(t.idx)
	}
	return t
}

// antialiasTaps follows PyTorch's _upsample_bilinear2d_aa (and PIL's
// resize): a triangle filter stretched by the scale when shrinking, weights
// normalized to sum to 1 over the input pixels inside the image.
func antialiasTaps(in, out int) *axisTaps {
	t := &axisTaps{in: in, out: out, aa: true, off: make([]int, out+1)}
	scale := float32(in) / float32(out)
	support := float32(1)
	invscale := float32(1)
	if scale >= 1 {
		support = scale
		invscale = 1 / scale
	}
	for o := 0; o < out; o++ {
		center := scale * (float32(o) + 0.5)
		xmin := int(center - support + 0.5)
		if xmin < 0 {
			xmin = 0
		}
		xmax := int(center + support + 0.5)
		if xmax > in {
			xmax = in
		}
		start := len(t.w)
		var total float32
		for j := xmin; j < xmax; j++ {
			w := 1 - float32(math.Abs(float64((float32(j)-center+0.5)*invscale)))
			if w < 0 {
				w = 0
			}
			t.idx = append(t.idx, j)
			t.w = append(t.w, w)
			total += w
		}
		if total != 0 {
			for k := start; k < len(t.w); k++ {
				t.w[k] /= total
			}
		}
		t.off[o+1] = len(t.idx)
	}
	return t
}

// resizer resizes CHW float32 images, caching the taps of the last sizes.
type resizer struct {
	aa      bool
	hTaps   *axisTaps // along W
	vTaps   *axisTaps // along H
	scratch []float32
}

func (r *resizer) taps(cur *axisTaps, in, out int) *axisTaps {
	if cur != nil && cur.in == in && cur.out == out {
		return cur
	}
	if r.aa {
		return antialiasTaps(in, out)
	}
	return bilinearTaps(in, out)
}

// resize writes src (c, inH, inW) resized to (c, outH, outW) into dst:
// separable, along W first, then along H; an axis whose size does not change
// is copied, as PyTorch does.
func (r *resizer) resize(dst, src []float32, c, inH, inW, outH, outW int) {
	if inH == outH && inW == outW {
		copy(dst[:c*outH*outW], src)
		return
	}
	tmp := src
	if inW != outW {
		r.hTaps = r.taps(r.hTaps, inW, outW)
		n := c * inH * outW
		if inH == outH {
			tmp = dst[:n]
		} else {
			if cap(r.scratch) < n {
				r.scratch = make([]float32, n)
			}
			tmp = r.scratch[:n]
		}
		t := r.hTaps
		for row := 0; row < c*inH; row++ {
			in := src[row*inW : (row+1)*inW]
			out := tmp[row*outW : (row+1)*outW]
			for o := range out {
				var s float32
				for k := t.off[o]; k < t.off[o+1]; k++ {
					s += t.w[k] * in[t.idx[k]]
				}
				out[o] = s
			}
		}
	}
	if inH != outH {
		r.vTaps = r.taps(r.vTaps, inH, outH)
		t := r.vTaps
		for ch := 0; ch < c; ch++ {
			in := tmp[ch*inH*outW : (ch+1)*inH*outW]
			out := dst[ch*outH*outW : (ch+1)*outH*outW]
			for o := 0; o < outH; o++ {
				orow := out[o*outW : (o+1)*outW]
				for x := range orow {
					orow[x] = 0
				}
				for k := t.off[o]; k < t.off[o+1]; k++ {
					w := t.w[k]
					irow := in[t.idx[k]*outW : (t.idx[k]+1)*outW]
					for x := range orow {
						orow[x] += w * irow[x]
					}
				}
			}
		}
	}
}

// Resize returns the CHW float32 image src of shape (c, inH, inW) resized to
// (c, outH, outW) bilinearly with PyTorch's F.interpolate semantics
// (align_corners=False); antialias selects antialias=True.
func Resize(src []float32, c, inH, inW, outH, outW int, antialias bool) []float32 {
	dst := make([]float32, c*outH*outW)
	r := resizer{aa: antialias}
	r.resize(dst, src, c, inH, inW, outH, outW)
	return dst
}
