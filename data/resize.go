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

// resizer resizes CHW images to float32, caching the taps of the last sizes.
type resizer struct {
	aa      bool
	hTaps   *axisTaps // along W
	vTaps   *axisTaps // along H
	scratch []float32
}

func (r *resizer) taps(cur *axisTaps, in, out int) *axisTaps {
	if cur != nil && cur.in == in && cur.out == out && cur.aa == r.aa {
		return cur
	}
	if r.aa {
		return antialiasTaps(in, out)
	}
	return bilinearTaps(in, out)
}

// tmp returns the intermediate buffer for n values: dst itself when the
// vertical pass is skipped.
func (r *resizer) tmp(dst []float32, n int, direct bool) []float32 {
	if direct {
		return dst[:n]
	}
	if cap(r.scratch) < n {
		r.scratch = make([]float32, n)
	}
	return r.scratch[:n]
}

// resize writes src (c, inH, inW) resized to (c, outH, outW) into dst:
// separable, along W first, then along H; an axis whose size does not change
// is copied, as PyTorch does.
func (r *resizer) resize(dst, src []float32, c, inH, inW, outH, outW int) {
	tmp := src
	if inW != outW {
		tmp = r.tmp(dst, c*inH*outW, inH == outH)
		r.hTaps = r.taps(r.hTaps, inW, outW)
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
	r.vpass(dst, tmp, c, inH, outH, outW)
}

// resizeU8 is resize of the image whose values are lut[src[i]], without
// converting the whole (possibly large) source to float32 first; the result
// is bit-identical to converting first.
func (r *resizer) resizeU8(dst []float32, src []uint8, lut *[256]float32, c, inH, inW, outH, outW int) {
	tmp := r.tmp(dst, c*inH*outW, inH == outH)
	if inW != outW {
		r.hTaps = r.taps(r.hTaps, inW, outW)
		t := r.hTaps
		for row := 0; row < c*inH; row++ {
			in := src[row*inW : (row+1)*inW]
			out := tmp[row*outW : (row+1)*outW]
			for o := range out {
				var s float32
				for k := t.off[o]; k < t.off[o+1]; k++ {
					s += t.w[k] * lut[in[t.idx[k]]]
				}
				out[o] = s
			}
		}
	} else {
		for i, v := range src[:c*inH*inW] {
			tmp[i] = lut[v]
		}
	}
	r.vpass(dst, tmp, c, inH, outH, outW)
}

// vpass resizes tmp (c, inH, outW) along H into dst (c, outH, outW), or
// copies it when the height does not change.
func (r *resizer) vpass(dst, tmp []float32, c, inH, outH, outW int) {
	if inH == outH {
		if len(tmp) > 0 && &tmp[0] != &dst[0] {
			copy(dst[:c*outH*outW], tmp)
		}
		return
	}
	r.vTaps = r.taps(r.vTaps, inH, outH)
	t := r.vTaps
	for ch := 0; ch < c; ch++ {
		in := tmp[ch*inH*outW : (ch+1)*inH*outW]
		out := dst[ch*outH*outW : (ch+1)*outH*outW]
		for o := 0; o < outH; o++ {
			orow := out[o*outW : (o+1)*outW]
			clear(orow)
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

// Resize returns the CHW float32 image src of shape (c, inH, inW) resized to
// (c, outH, outW) bilinearly with PyTorch's F.interpolate semantics
// (align_corners=False); antialias selects antialias=True.
func Resize(src []float32, c, inH, inW, outH, outW int, antialias bool) []float32 {
	dst := make([]float32, c*outH*outW)
	r := resizer{aa: antialias}
	r.resize(dst, src, c, inH, inW, outH, outW)
	return dst
}

// Look-up tables from uint8 to float32: ToTensor's v/255, and v itself.
var lutUnit, lutIdentity = func() (u, id [256]float32) {
	for i := range u {
		u[i] = float32(i) / 255
		id[i] = float32(i)
	}
	return u, id
}()
