package kernels

import "math"

// lanes is the width of every float32 reduction in this package (sums,
// dot products, softmax denominators, LayerNorm statistics). A reduction
// over x is defined as
//
//	acc[j] = op(… op(op(0, x[j]), x[j+16]) …, x[j+16k])   for j < 16
//	result = reduceLanes(acc)
//
// element i going to lane i mod 16, each lane in element order, missing
// elements of the last block counting as a neutral element (adding +0
// changes no lane: a lane that starts at +0 never holds −0). Every
// implementation, portable Go, AVX2 (two 8-lane registers) and AVX-512
// (one 16-lane register), computes exactly this, so the bits do not
// depend on the CPU.
const lanes = 16

// reduceLanes adds the 16 partial sums in a fixed tree: lane j + lane
// j+8, then j + j+4, then j + j+2, then 0 + 1 (the order of a 512-bit
// register folded in halves).
func reduceLanes(a *[lanes]float32) float32 {
	var s [8]float32
	for j := range s {
		s[j] = a[j] + a[j+8]
	}
	return ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]))
}

// wholeBlocks returns the length of x's whole 16-element blocks.
func wholeBlocks(n int) int { return n &^ (lanes - 1) }

// sumVec returns Σ x.
func sumVec(x []float32) float32 {
	var acc [lanes]float32
	n := wholeBlocks(len(x))
	sumLanes(&acc, x[:n])
	if n < len(x) {
		var pad [lanes]float32
		copy(pad[:], x[n:])
		sumLanes(&acc, pad[:])
	}
	return reduceLanes(&acc)
}

// dotVec returns Σ x·y, each term fused into its lane.
func dotVec(x, y []float32) float32 {
	y = y[:len(x)]
	var acc [lanes]float32
	n := wholeBlocks(len(x))
	dotLanes(&acc, x[:n], y[:n])
	if n < len(x) {
		var px, py [lanes]float32
		copy(px[:], x[n:])
		copy(py[:], y[n:])
		dotLanes(&acc, px[:], py[:])
	}
	return reduceLanes(&acc)
}

// sumSqDevVec returns Σ (x−mean)², each square fused into its lane.
func sumSqDevVec(x []float32, mean float32) float32 {
	var acc [lanes]float32
	n := wholeBlocks(len(x))
	sumSqDevLanes(&acc, x[:n], mean)
	if n < len(x) {
		pad := filled(mean) // (mean − mean)² = +0
		copy(pad[:], x[n:])
		sumSqDevLanes(&acc, pad[:], mean)
	}
	return reduceLanes(&acc)
}

// expSubSumVec sets x = e^(x−m) and returns the sum of the new x.
func expSubSumVec(x []float32, m float32) float32 {
	var acc [lanes]float32
	n := wholeBlocks(len(x))
	expSubSumLanes(&acc, x[:n], m)
	if n < len(x) {
		pad := filled(float32(math.Inf(-1))) // e^(−∞−m) = +0 for m < +∞
		copy(pad[:], x[n:])
		expSubSumLanes(&acc, pad[:], m)
		copy(x[n:], pad[:])
	}
	return reduceLanes(&acc)
}

// lnBackwardSumsVec returns Σ g and Σ g·x̂ for one row, g = dy·w,
// x̂ = (x−mean)·rstd, and accumulates dw += dy·x̂, db += dy.
func lnBackwardSumsVec(dy, x, w, dw, db []float32, mean, rstd float32) (sg, sgx float32) {
	var acc [2][lanes]float32
	n := wholeBlocks(len(x))
	lnBackwardSumsLanes(&acc, dy[:n], x[:n], w[:n], dw[:n], db[:n], mean, rstd)
	if t := len(x) - n; t > 0 {
		// dy = w = 0 adds +0 to every lane, dw and db.
		var pdy, pw, pdw, pdb [lanes]float32
		px := filled(mean)
		copy(pdy[:], dy[n:n+t])
		copy(px[:], x[n:])
		copy(pw[:], w[n:n+t])
		copy(pdw[:], dw[n:n+t])
		copy(pdb[:], db[n:n+t])
		lnBackwardSumsLanes(&acc, pdy[:], px[:], pw[:], pdw[:], pdb[:], mean, rstd)
		copy(dw[n:n+t], pdw[:])
		copy(db[n:n+t], pdb[:])
	}
	return reduceLanes(&acc[0]), reduceLanes(&acc[1])
}

// filled returns a block of lanes copies of v.
func filled(v float32) (b [lanes]float32) {
	for i := range b {
		b[i] = v
	}
	return b
}
