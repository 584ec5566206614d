package data

import "github.com/vitgo/vit/internal/interp"

// axisTaps are the taps of one axis, with the kernel they were made for.
type axisTaps struct {
	*interp.Taps[float32] // weights in float32, as PyTorch's CPU kernels for float tensors
	aa                    bool
	contig                bool // every output's input indices are consecutive
}

func newAxisTaps(t *interp.Taps[float32], aa bool) *axisTaps {
	contig := true
	for o := 0; o < t.Out && contig; o++ {
		for k := t.Off[o]; k < t.Off[o+1]; k++ {
			if t.Idx[k] != t.Idx[t.Off[o]]+k-t.Off[o] {
				contig = false
				break
			}
		}
	}
	return &axisTaps{t, aa, contig}
}

// rows4 is row on four rows at once (in: 4 rows of In values, out: 4 rows
// of Out values), with the same sums in the same order; the four
// independent sums run in parallel in the CPU's pipeline.
func (t *axisTaps) rows4(out, in []float32) {
	if !t.contig {
		for r := 0; r < 4; r++ {
			t.row(out[r*t.Out:(r+1)*t.Out], in[r*t.In:(r+1)*t.In])
		}
		return
	}
	n := t.In
	in0, in1, in2, in3 := in[:n], in[n:2*n], in[2*n:3*n], in[3*n:4*n]
	m := t.Out
	out0, out1, out2, out3 := out[:m], out[m:2*m], out[2*m:3*m], out[3*m:4*m]
	for o := range out0 {
		lo, hi := t.Off[o], t.Off[o+1]
		ws := t.W[lo:hi]
		i0 := 0
		if lo < hi {
			i0 = t.Idx[lo]
		}
		x0, x1, x2, x3 := in0[i0:], in1[i0:], in2[i0:], in3[i0:]
		x0, x1, x2, x3 = x0[:len(ws)], x1[:len(ws)], x2[:len(ws)], x3[:len(ws)]
		var s0, s1, s2, s3 float32
		for j, w := range ws {
			s0 += w * x0[j]
			s1 += w * x1[j]
			s2 += w * x2[j]
			s3 += w * x3[j]
		}
		out0[o], out1[o], out2[o], out3[o] = s0, s1, s2, s3
	}
}

// row writes in (one row of In values) resampled into out (Out values),
// each output summing its taps in index order.
func (t *axisTaps) row(out, in []float32) {
	if !t.contig {
		for o := range out {
			var s float32
			for k := t.Off[o]; k < t.Off[o+1]; k++ {
				s += t.W[k] * in[t.Idx[k]]
			}
			out[o] = s
		}
		return
	}
	for o := range out {
		lo, hi := t.Off[o], t.Off[o+1]
		if lo == hi {
			out[o] = 0
			continue
		}
		ws := t.W[lo:hi]
		xs := in[t.Idx[lo]:]
		xs = xs[:len(ws)]
		var s float32
		for j, w := range ws {
			s += w * xs[j]
		}
		out[o] = s
	}
}

// resizer resizes CHW images to float32, caching the taps of the last sizes.
type resizer struct {
	aa      bool
	hTaps   *axisTaps // along W
	vTaps   *axisTaps // along H
	scratch []float32
	rowf    []float32 // one source row in float32
}

func (r *resizer) taps(cur *axisTaps, in, out int) *axisTaps {
	if cur != nil && cur.In == in && cur.Out == out && cur.aa == r.aa {
		return cur
	}
	if r.aa {
		return newAxisTaps(interp.BilinearAA[float32](in, out), true)
	}
	return newAxisTaps(interp.Bilinear[float32](in, out), false)
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
		row := 0
		for ; row+4 <= c*inH; row += 4 {
			r.hTaps.rows4(tmp[row*outW:(row+4)*outW], src[row*inW:(row+4)*inW])
		}
		for ; row < c*inH; row++ {
			r.hTaps.row(tmp[row*outW:(row+1)*outW], src[row*inW:(row+1)*inW])
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
		if cap(r.rowf) < 4*inW {
			r.rowf = make([]float32, 4*inW)
		}
		rowf := r.rowf[:4*inW]
		for row := 0; row < c*inH; row += 4 {
			k := min(4, c*inH-row)
			for i, v := range src[row*inW : (row+k)*inW] {
				rowf[i] = lut[v]
			}
			if k == 4 {
				r.hTaps.rows4(tmp[row*outW:(row+4)*outW], rowf)
				continue
			}
			for j := 0; j < k; j++ {
				r.hTaps.row(tmp[(row+j)*outW:(row+j+1)*outW], rowf[j*inW:(j+1)*inW])
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
				irow = irow[:len(orow)]
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
