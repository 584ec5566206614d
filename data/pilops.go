package data

import "math"

// The RandAugment ops, reproducing PIL 9's arithmetic (ImageOps,
// ImageEnhance, Image.transform with bilinear resampling) on CHW uint8
// images, channel by channel as PIL processes bands. Each modifies img.Pix in
// place.

// applyLUT maps every pixel of channel ch through lut.
func applyLUT(img Image, ch int, lut *[256]uint8) {
	hw := img.H * img.W
	p := img.Pix[ch*hw : (ch+1)*hw]
	for i, v := range p {
		p[i] = lut[v]
	}
}

func histogram(p []uint8) (h [256]int) {
	for _, v := range p {
		h[v]++
	}
	return h
}

// autoContrast is ImageOps.autocontrast(img) with cutoff 0: per channel, the
// lowest and highest present values are stretched to 0 and 255.
func autoContrast(img Image) {
	hw := img.H * img.W
	for ch := 0; ch < img.C; ch++ {
		h := histogram(img.Pix[ch*hw : (ch+1)*hw])
		lo, hi := 0, 255
		for lo < 256 && h[lo] == 0 {
			lo++
		}
		for hi >= 0 && h[hi] == 0 {
			hi--
		}
		if hi <= lo {
			continue
		}
		scale := 255.0 / float64(hi-lo)
		offset := -float64(lo) * scale
		var lut [256]uint8
		for i := range lut {
			v := int(float64(i)*scale + offset) // Python int(): toward zero
			lut[i] = uint8(min(max(v, 0), 255))
		}
		applyLUT(img, ch, &lut)
	}
}

// equalize is ImageOps.equalize(img): per-channel histogram equalization.
func equalize(img Image) {
	hw := img.H * img.W
	for ch := 0; ch < img.C; ch++ {
		h := histogram(img.Pix[ch*hw : (ch+1)*hw])
		var nonzero []int
		for _, c := range h {
			if c != 0 {
				nonzero = append(nonzero, c)
			}
		}
		if len(nonzero) <= 1 {
			continue
		}
		total := 0
		for _, c := range nonzero {
			total += c
		}
		step := (total - nonzero[len(nonzero)-1]) / 256
		if step == 0 {
			continue
		}
		var lut [256]uint8
		n := step / 2
		for i := range lut {
			lut[i] = uint8(min(n/step, 255))
			n += h[i]
		}
		applyLUT(img, ch, &lut)
	}
}

// invert is ImageOps.invert.
func invert(img Image) {
	for i, v := range img.Pix {
		img.Pix[i] = 255 - v
	}
}

// posterize is ImageOps.posterize keeping the top bits bits (>= 8: no-op).
func posterize(img Image, bits int) {
	if bits >= 8 {
		return
	}
	if bits < 0 {
		bits = 0
	}
	mask := ^uint8(1<<(8-bits) - 1)
	for i, v := range img.Pix {
		img.Pix[i] = v & mask
	}
}

// solarize is ImageOps.solarize: values >= threshold are inverted.
func solarize(img Image, threshold int) {
	for i, v := range img.Pix {
		if int(v) >= threshold {
			img.Pix[i] = 255 - v
		}
	}
}

// solarizeAdd is timm's solarize_add: values below threshold get add added
// (capped at 255).
func solarizeAdd(img Image, add, threshold int) {
	for i, v := range img.Pix {
		if int(v) < threshold {
			img.Pix[i] = uint8(min(int(v)+add, 255))
		}
	}
}

// blend is Image.blend(degenerate, img, factor), PIL's float32 arithmetic
// truncated toward zero and clipped: out = d + factor·(x − d).
func blend(img Image, degenerate []uint8, factor float64) {
	alpha := float32(factor)
	if alpha == 1 {
		return
	}
	if alpha == 0 {
		copy(img.Pix, degenerate)
		return
	}
	for i, x := range img.Pix {
		d := degenerate[i]
		t := float32(d) + float32(alpha*float32(int(x)-int(d)))
		switch {
		case t <= 0:
			img.Pix[i] = 0
		case t >= 255:
			img.Pix[i] = 255
		default:
			img.Pix[i] = uint8(t)
		}
	}
}

// lumaPlane returns PIL's "L" conversion of img (its only channel when gray).
func lumaPlane(img Image) []uint8 {
	hw := img.H * img.W
	if img.C == 1 {
		return img.Pix[:hw]
	}
	out := make([]uint8, hw)
	r, g, b := img.Pix[:hw], img.Pix[hw:2*hw], img.Pix[2*hw:3*hw]
	for i := range out {
		out[i] = lumaU8(r[i], g[i], b[i])
	}
	return out
}

// enhanceColor is ImageEnhance.Color(img).enhance(f): blend with the
// grayscale image (a no-op on grayscale images).
func enhanceColor(img Image, f float64) {
	hw := img.H * img.W
	l := lumaPlane(img)
	deg := make([]uint8, len(img.Pix))
	for ch := 0; ch < img.C; ch++ {
		copy(deg[ch*hw:], l)
	}
	blend(img, deg, f)
}

// enhanceContrast is ImageEnhance.Contrast(img).enhance(f): blend with a
// flat image at the rounded mean luma.
func enhanceContrast(img Image, f float64) {
	l := lumaPlane(img)
	sum := 0
	for _, v := range l {
		sum += int(v)
	}
	mean := uint8(int(float64(sum)/float64(len(l)) + 0.5))
	deg := make([]uint8, len(img.Pix))
	for i := range deg {
		deg[i] = mean
	}
	blend(img, deg, f)
}

// enhanceBrightness is ImageEnhance.Brightness(img).enhance(f): blend with black.
func enhanceBrightness(img Image, f float64) {
	blend(img, make([]uint8, len(img.Pix)), f)
}

// enhanceSharpness is ImageEnhance.Sharpness(img).enhance(f): blend with the
// image filtered by PIL's SMOOTH kernel (1 1 1 / 1 5 1 / 1 1 1)/13, whose
// border pixels are copied unfiltered.
func enhanceSharpness(img Image, f float64) {
	deg := make([]uint8, len(img.Pix))
	copy(deg, img.Pix)
	h, w := img.H, img.W
	if h >= 3 && w >= 3 {
		k1 := float32(1) / float32(13)
		k5 := float32(5) / float32(13)
		hw := h * w
		for ch := 0; ch < img.C; ch++ {
			in := img.Pix[ch*hw : (ch+1)*hw]
			out := deg[ch*hw : (ch+1)*hw]
			for y := 1; y < h-1; y++ {
				up, mid, dn := in[(y-1)*w:], in[y*w:], in[(y+1)*w:]
				for x := 1; x < w-1; x++ {
					// PIL's order: row y+1, row y, row y-1, each left to right, plus 0.5 for rounding.
					ss := float32(0.5)
					ss += float32(dn[x-1])*k1 + float32(dn[x])*k1 + float32(dn[x+1])*k1
					ss += float32(mid[x-1])*k1 + float32(mid[x])*k5 + float32(mid[x+1])*k1
					ss += float32(up[x-1])*k1 + float32(up[x])*k1 + float32(up[x+1])*k1
					switch {
					case ss <= 0:
						out[y*w+x] = 0
					case ss >= 255:
						out[y*w+x] = 255
					default:
						out[y*w+x] = uint8(ss)
					}
				}
			}
		}
	}
	blend(img, deg, f)
}

// affine is Image.transform(size, AFFINE, a, resample=BILINEAR,
// fillcolor=fill): output pixel (x, y) samples the input at
// (a0·(x+½) + a1·(y+½) + a2, a3·(x+½) + a4·(y+½) + a5) bilinearly; samples
// outside the image take the fill colour.
func affine(img Image, a [6]float64, fill []uint8) {
	h, w, hw := img.H, img.W, img.H*img.W
	src := make([]uint8, len(img.Pix))
	copy(src, img.Pix)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			xin := a[0]*(float64(x)+0.5) + a[1]*(float64(y)+0.5) + a[2]
			yin := a[3]*(float64(x)+0.5) + a[4]*(float64(y)+0.5) + a[5]
			if xin < 0 || xin >= float64(w) || yin < 0 || yin >= float64(h) {
				for ch := 0; ch < img.C; ch++ {
					img.Pix[ch*hw+y*w+x] = fillAt(fill, ch)
				}
				continue
			}
			xin -= 0.5
			yin -= 0.5
			xf, yf := math.Floor(xin), math.Floor(yin)
			dx, dy := xin-xf, yin-yf
			xi, yi := int(xf), int(yf)
			x0, x1 := clampInt(xi, 0, w-1), clampInt(xi+1, 0, w-1)
			y0 := clampInt(yi, 0, h-1)
			for ch := 0; ch < img.C; ch++ {
				p := src[ch*hw:]
				r0 := p[y0*w:]
				v1 := float64(r0[x0]) + (float64(r0[x1])-float64(r0[x0]))*dx
				v2 := v1
				if yi+1 >= 0 && yi+1 < h {
					r1 := p[(yi+1)*w:]
					v2 = float64(r1[x0]) + (float64(r1[x1])-float64(r1[x0]))*dx
				}
				v := v1 + (v2-v1)*dy
				img.Pix[ch*hw+y*w+x] = uint8(v)
			}
		}
	}
}

func fillAt(fill []uint8, ch int) uint8 {
	switch {
	case len(fill) == 0:
		return 0
	case ch < len(fill):
		return fill[ch]
	default:
		return fill[0]
	}
}

func clampInt(v, lo, hi int) int { return min(max(v, lo), hi) }

// pyRound15 is Python's round(v, 15).
func pyRound15(v float64) float64 { return math.RoundToEven(v*1e15) / 1e15 }

// rotate is Image.rotate(deg, resample=BILINEAR, fillcolor=fill) about the
// image centre, counter-clockwise, without expanding.
func rotate(img Image, deg float64, fill []uint8) {
	deg = math.Mod(deg, 360)
	if deg < 0 {
		deg += 360
	}
	switch {
	case deg == 0:
		return
	case deg == 180:
		rotate180(img)
		return
	}
	w, h := float64(img.W), float64(img.H)
	cx, cy := w/2, h/2
	ang := -deg * math.Pi / 180
	m := [6]float64{
		pyRound15(math.Cos(ang)), pyRound15(math.Sin(ang)), 0,
		pyRound15(-math.Sin(ang)), pyRound15(math.Cos(ang)), 0,
	}
	m[2] = m[0]*(-cx) + m[1]*(-cy) + m[2]
	m[5] = m[3]*(-cx) + m[4]*(-cy) + m[5]
	m[2] += cx
	m[5] += cy
	if (deg == 90 || deg == 270) && img.W == img.H {
		rotateQuarter(img, deg == 90)
		return
	}
	affine(img, m, fill)
}

func rotate180(img Image) {
	hw := img.H * img.W
	for ch := 0; ch < img.C; ch++ {
		p := img.Pix[ch*hw : (ch+1)*hw]
		for i, j := 0, hw-1; i < j; i, j = i+1, j-1 {
			p[i], p[j] = p[j], p[i]
		}
	}
}

// rotateQuarter is PIL's transpose(ROTATE_90) (ccw) or ROTATE_270 on a square image.
func rotateQuarter(img Image, ccw bool) {
	n := img.W
	hw := n * n
	src := make([]uint8, hw)
	for ch := 0; ch < img.C; ch++ {
		p := img.Pix[ch*hw : (ch+1)*hw]
		copy(src, p)
		for y := 0; y < n; y++ {
			for x := 0; x < n; x++ {
				if ccw {
					p[y*n+x] = src[x*n+(n-1-y)]
				} else {
					p[y*n+x] = src[(n-1-x)*n+y]
				}
			}
		}
	}
}

// shearX is timm's shear_x: affine (1, f, 0, 0, 1, 0).
func shearX(img Image, f float64, fill []uint8) { affine(img, [6]float64{1, f, 0, 0, 1, 0}, fill) }

// shearY is timm's shear_y: affine (1, 0, 0, f, 1, 0).
func shearY(img Image, f float64, fill []uint8) { affine(img, [6]float64{1, 0, 0, f, 1, 0}, fill) }

// translateXRel is timm's translate_x_rel: a shift by pct·width pixels.
func translateXRel(img Image, pct float64, fill []uint8) {
	affine(img, [6]float64{1, 0, pct * float64(img.W), 0, 1, 0}, fill)
}

// translateYRel is timm's translate_y_rel: a shift by pct·height pixels.
func translateYRel(img Image, pct float64, fill []uint8) {
	affine(img, [6]float64{1, 0, 0, 0, 1, pct * float64(img.H)}, fill)
}
