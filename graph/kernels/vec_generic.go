package kernels

import "math"

// Portable Go versions of the vector primitives. They follow the assembly
// step by step (same constants, same lanes, fma32 wherever the assembly
// fuses a multiply and an add) and give its bits; they are what runs
// without it (other GOARCHes, the purego tag, CPUs without AVX2+FMA).
// A product that feeds an addition is converted to float32 explicitly,
// which forbids the compiler to fuse the two (the Go spec allows fusion
// otherwise, and arm64 and GOAMD64=v3 builds do it).

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
	r := fma32(-n, ln2Hi, a)
	r = fma32(-n, ln2Lo, r)
	r += b
	p := fma32(expP0, r, expP1)
	p = fma32(p, r, expP2)
	p = fma32(p, r, expP3)
	p = fma32(p, r, expP4)
	p = fma32(p, r, expP5)
	y := fma32(p, r*r, r) + 1
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
	t := 1 / fma32(min(ax, geluXMax), geluTScale, 1)
	xc := min(ax, geluEMax)
	hi := xc * xc
	lo := float32(float64(xc)*float64(xc) - float64(hi)) // exact: hi + lo = xc²
	e = expParts(-0.5*hi, -0.5*lo)
	q := fma32(geluQ9, t, geluQ8)
	q = fma32(q, t, geluQ7)
	q = fma32(q, t, geluQ6)
	q = fma32(q, t, geluQ5)
	q = fma32(q, t, geluQ4)
	q = fma32(q, t, geluQ3)
	q = fma32(q, t, geluQ2)
	q = fma32(q, t, geluQ1)
	q = fma32(q, t, geluQ0)
	return q * t * 0.5, e
}

// geluScalar is x·Φ(x): (x·h)·e for x < 0, x·(1 − h·e) otherwise, with
// 1 − h·e fused.
func geluScalar(x float32) float32 {
	h, e := normParts(x)
	if math.Float32bits(x)>>31 != 0 {
		return (x * h) * e
	}
	return x * fma32(-h, e, 1)
}

// geluGradScalar is Φ(x) + x·φ(x) = e·(h + x·c) for x < 0 and
// 1 + e·(x·c − h) otherwise, c = 1/√(2π).
func geluGradScalar(x float32) float32 {
	h, e := normParts(x)
	w := float32(x * invSqrt2Pi)
	if math.Float32bits(x)>>31 != 0 {
		return (h + w) * e
	}
	return fma32(w-h, e, 1)
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

// The reductions' lane kernels. Every float32 sum in this package is taken
// over lanes partial sums, element i into lane i mod lanes, each lane in
// element order, and the lanes are then added by reduceLanes' fixed tree
// (see lanes.go). The Go lane kernels take any length; the wrappers pad
// the last partial block so the assembly sees whole blocks only.

func sumLanesGo(acc *[lanes]float32, x []float32) {
	for i, v := range x {
		acc[i&(lanes-1)] += v
	}
}

func dotLanesGo(acc *[lanes]float32, x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		acc[i&(lanes-1)] = fma32(v, y[i], acc[i&(lanes-1)])
	}
}

func sumSqDevLanesGo(acc *[lanes]float32, x []float32, mean float32) {
	for i, v := range x {
		d := v - mean
		acc[i&(lanes-1)] = fma32(d, d, acc[i&(lanes-1)])
	}
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

// expSubSumLanesGo sets x = e^(x−m) and adds the new x into the lanes.
func expSubSumLanesGo(acc *[lanes]float32, x []float32, m float32) {
	for i := range x {
		x[i] = expf(x[i] - m)
		acc[i&(lanes-1)] += x[i]
	}
}

func axpyGo(alpha float32, x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] = fma32(alpha, v, y[i])
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
		y[i] = fma32((v-mean)*rstd, w[i], b[i])
	}
}

// lnBackwardSumsLanesGo adds g = dy·w into acc[0] and g·x̂ into acc[1]
// (lanes as in sumLanesGo), x̂ = (x−mean)·rstd, and accumulates
// dw += dy·x̂, db += dy.
func lnBackwardSumsLanesGo(acc *[2][lanes]float32, dy, x, w, dw, db []float32, mean, rstd float32) {
	n := len(x)
	dy, w, dw, db = dy[:n], w[:n], dw[:n], db[:n]
	for i := 0; i < n; i++ {
		xh := (x[i] - mean) * rstd
		g := float32(dy[i] * w[i])
		j := i & (lanes - 1)
		acc[0][j] += g
		acc[1][j] = fma32(xh, g, acc[1][j])
		dw[i] = fma32(xh, dy[i], dw[i])
		db[i] += dy[i]
	}
}

// lnBackwardDxGo writes dx = rstd·(dy·w − c1 − x̂·c2) for one row.
func lnBackwardDxGo(dx, dy, x, w []float32, mean, rstd, c1, c2 float32) {
	n := len(x)
	dx, dy, w = dx[:n], dy[:n], w[:n]
	for i := 0; i < n; i++ {
		xh := (x[i] - mean) * rstd
		dx[i] = rstd * fma32(-xh, c2, float32(dy[i]*w[i])-c1)
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
