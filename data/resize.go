package data

import "github.com/vitgo/vit/internal/interp"

// axisTaps are the taps of one axis, with the kernel they were made for.
type axisTaps struct {
	*interp.Taps[float32] // weights in float32, as PyTorch's CPU kernels for float tensors
	aa                    bool
}

// resizer resizes CHW images to float32, caching the taps of the last sizes.
type resizer struct {
	aa      bool
	hTaps   *axisTaps // along W
	vTaps   *axisTaps // along H
	scratch []float32
}

func (r *resizer) taps(cur *axisTaps, in, out int) *axisTaps {
	if cur != nil && cur.In == in && cur.Out == out && cur.aa == r.aa {
		return cur
	}
	if r.aa {
		return &axisTaps{interp.BilinearAA[float32](in, out), true}
	}
	return &axisTaps{interp.Bilinear[float32](in, out), false}
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
				for k := t.Off[o]; k < t.Off[o+1]; k++ {
					s += t.W[k] * in[t.Idx[k]]
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
				for k := t.Off[o]; k < t.Off[o+1]; k++ {
					s += t.W[k] * lut[in[t.Idx[k]]]
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
			for k := t.Off[o]; k < t.Off[o+1]; k++ {
				w := t.W[k]
				irow := in[t.Idx[k]*outW : (t.Idx[k]+1)*outW]
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
