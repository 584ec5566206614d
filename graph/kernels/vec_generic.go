package kernels

import "math"

// Portable Go versions of the vector primitives. They follow the AVX2
// assembly step by step (same constants, same reductions) and are what
// runs without it (other GOARCHes, the purego tag, CPUs without AVX2+FMA).

// Constants of the exp approximation (Cephes expf): e^x = 2^n·e^r with
// n = round(x·log2 e), r = x − n·ln 2 split in two parts so n·ln2Hi is exact.
const (
	expLo  = -104.0 // below: the result rounds to 0 (2^-150)
	expHi  = 89.0   // above: the result overflows to +Inf
	log2e  = 1.44269504088896341
	ln2Hi  = 0.693359375
	ln2Lo  = -2.12194440e-4
	expP0  = 1.9875691500e-4
	expP1  = 1.3981999507e-3
	expP2  = 8.3334519073e-3
	expP3  = 4.1665795894e-2
	expP4  = 1.6666665459e-1
	expP5  = 5.0000001201e-1
	expInf = float32(math.MaxFloat32)
)

// expParts returns e^(a+b) for |b| much smaller than ulp(a): b carries the
// low part of an argument that float32 cannot hold exactly. a is clamped to
// [expLo, expHi]; NaN propagates. 2^n is applied in two halves so results in
// the subnormal range and up to MaxFloat32 come out right.
func expParts(a, b float32) float32 {
	if a != a {
		return a
	}
	a = min(max(a, expLo), expHi)
	n := float32(math.RoundToEven(float64(a * log2e)))
	r := a - n*ln2Hi
	r = r - n*ln2Lo
	r += b
	p := float32(expP0)
	p = p*r + expP1
	p = p*r + expP2
	p = p*r + expP3
	p = p*r + expP4
	p = p*r + expP5
	y := p*(r*r) + r + 1
	ni := int32(n)
	n1 := ni >> 1
	n2 := ni - n1
	return y * math.Float32frombits(uint32(n1+127)<<23) * math.Float32frombits(uint32(n2+127)<<23)
}

func expf(x float32) float32 { return expParts(x, 0) }

// Φ(x) and φ(x) for GELU: erfc(z) = t·e^(−z²)·Q(t) with z = |x|/√2 and
// t = 1/(1 + z/2), Q a degree-9 fit (relative error 2e-8 on t ∈ [1/6, 1],
// i.e. |x| ≤ 10√2; beyond it Φ is 0 or 1 to float32 precision). x² is
// carried as hi+lo so e^(−x²/2) keeps its relative accuracy for large |x|.
const (
	geluXMax    = 14.142135           // 10·√2: |x| is clamped here for t (t ≥ 1/6)
	geluEMax    = 15.0                // and here for e^(−x²/2), which then underflows to 0
	geluTScale  = 0.35355339059327373 // 1/(2√2): t = 1/(1 + |x|·geluTScale)
	invSqrt2Pi  = 0.3989422804014327
	geluQ0      = 0.2820644974708557
	geluQ1      = 0.2828570306301117
	geluQ2      = 0.23864488303661346
	geluQ3      = 0.2255416363477707
	geluQ4      = -0.09831701219081879
	geluQ5      = 0.4212731719017029
	geluQ6      = -0.6700212359428406
	geluQ7      = 0.42892757058143616
	geluQ8      = -0.12325438112020493
	geluQ9      = 0.012283828109502792
	absMaskBits = 0x7fffffff
)

// normParts returns h and e with Φ(−|x|) = h·e, e = e^(−x²/2): h =
// t·Q(t)/2 is O(0.1–0.5) and e carries the tiny factor. Callers multiply by
// e last, so results stay accurate down to the subnormal range even when
// Φ itself is subnormal.
func normParts(x float32) (h, e float32) {
	ax := math.Float32frombits(math.Float32bits(x) & absMaskBits)
	t := 1 / (1 + min(ax, geluXMax)*geluTScale)
	xc := min(ax, geluEMax)
	hi := xc * xc
	lo := float32(float64(xc)*float64(xc) - float64(hi)) // exact: hi + lo = xc²
	e = expParts(-0.5*hi, -0.5*lo)
	q := float32(geluQ9)
	q = q*t + geluQ8
	q = q*t + geluQ7
	q = q*t + geluQ6
	q = q*t + geluQ5
	q = q*t + geluQ4
	q = q*t + geluQ3
	q = q*t + geluQ2
	q = q*t + geluQ1
	q = q*t + geluQ0
	return q * t * 0.5, e
}

// geluScalar is x·Φ(x): (x·h)·e for x < 0, x·(1 − h·e) otherwise.
func geluScalar(x float32) float32 {
	h, e := normParts(x)
	if math.Float32bits(x)>>31 != 0 {
		return (x * h) * e
	}
	return x * (1 - h*e)
}

// geluGradScalar is Φ(x) + x·φ(x) = e·(h + x·c) for x < 0 and
// 1 + e·(x·c − h) otherwise, c = 1/√(2π).
func geluGradScalar(x float32) float32 {
	h, e := normParts(x)
	w := x * invSqrt2Pi
	if math.Float32bits(x)>>31 != 0 {
		return (h + w) * e
	}
	return (w-h)*e + 1
}

func geluGo(dst, src []float32) {
	dst = dst[:len(src)]
	for i, x := range src {
		dst[i] = geluScalar(x)
	}
}

func geluBackwardGo(dx, x, dy []float32) {
	dx, dy = dx[:len(x)], dy[:len(x)]
	for i, v := range x {
		dx[i] = dy[i] * geluGradScalar(v)
	}
}

func expGo(dst, src []float32) {
	dst = dst[:len(src)]
	for i, x := range src {
		dst[i] = expf(x)
	}
}

// Reductions use 8 interleaved partial sums, like the 8 lanes of a YMM
// register, combined pairwise at the end.
func sumGo(x []float32) float32 {
	var s [8]float32
	n := len(x) &^ 7
	for i := 0; i < n; i += 8 {
		v := x[i : i+8 : i+8]
		for j := range s {
			s[j] += v[j]
		}
	}
	r := reduce8(s)
	for _, v := range x[n:] {
		r += v
	}
	return r
}

func reduce8(s [8]float32) float32 {
	return ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]))
}

func dotGo(x, y []float32) float32 {
	y = y[:len(x)]
	var s [8]float32
	n := len(x) &^ 7
	for i := 0; i < n; i += 8 {
		a, b := x[i:i+8:i+8], y[i:i+8:i+8]
		for j := range s {
			s[j] += a[j] * b[j]
		}
	}
	r := reduce8(s)
	for i := n; i < len(x); i++ {
		r += x[i] * y[i]
	}
	return r
}

func sumSqDevGo(x []float32, mean float32) float32 {
	var s [8]float32
	n := len(x) &^ 7
	for i := 0; i < n; i += 8 {
		v := x[i : i+8 : i+8]
		for j := range s {
			d := v[j] - mean
			s[j] += d * d
		}
	}
	r := reduce8(s)
	for _, v := range x[n:] {
		d := v - mean
		r += d * d
	}
	return r
}

func maxGo(x []float32) float32 {
	m := float32(math.Inf(-1))
	for _, v := range x {
		if v > m || v != v {
			m = v
		}
	}
	return m
}

// expSubSumGo sets x = e^(x−m) and returns the sum of the new x.
func expSubSumGo(x []float32, m float32) float32 {
	var s [8]float32
	n := len(x) &^ 7
	for i := 0; i < n; i += 8 {
		v := x[i : i+8 : i+8]
		for j := range s {
			v[j] = expf(v[j] - m)
			s[j] += v[j]
		}
	}
	r := reduce8(s)
	for i := n; i < len(x); i++ {
		x[i] = expf(x[i] - m)
		r += x[i]
	}
	return r
}

func axpyGo(alpha float32, x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += alpha * v
	}
}

func scaleGo(alpha float32, x []float32) {
	for i := range x {
		x[i] *= alpha
	}
}

func addGo(dst, src []float32) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] += v
	}
}

// lnForwardGo writes y = (x−mean)·rstd·w + b for one row.
func lnForwardGo(y, x, w, b []float32, mean, rstd float32) {
	y, w, b = y[:len(x)], w[:len(x)], b[:len(x)]
	for i, v := range x {
		y[i] = (v-mean)*rstd*w[i] + b[i]
	}
}

// lnBackwardSumsGo returns Σ g and Σ g·x̂ for one row, g = dy·w,
// x̂ = (x−mean)·rstd, and accumulates dw += dy·x̂, db += dy.
func lnBackwardSumsGo(dy, x, w, dw, db []float32, mean, rstd float32) (sg, sgx float32) {
	n := len(x)
	dy, w, dw, db = dy[:n], w[:n], dw[:n], db[:n]
	var s1, s2 [8]float32
	for i := 0; i < n; i++ {
		xh := (x[i] - mean) * rstd
		g := dy[i] * w[i]
		s1[i&7] += g
		s2[i&7] += g * xh
		dw[i] += dy[i] * xh
		db[i] += dy[i]
	}
	return reduce8(s1), reduce8(s2)
}

// lnBackwardDxGo writes dx = rstd·(dy·w − c1 − x̂·c2) for one row.
func lnBackwardDxGo(dx, dy, x, w []float32, mean, rstd, c1, c2 float32) {
	n := len(x)
	dx, dy, w = dx[:n], dy[:n], w[:n]
	for i := 0; i < n; i++ {
		xh := (x[i] - mean) * rstd
		dx[i] = rstd * (dy[i]*w[i] - c1 - xh*c2)
	}
}

// softmaxBackwardGo writes dx = y·(dy − s) for one row.
func softmaxBackwardGo(dx, y, dy []float32, s float32) {
	n := len(y)
	dx, dy = dx[:n], dy[:n]
	for i := 0; i < n; i++ {
		dx[i] = y[i] * (dy[i] - s)
	}
}
