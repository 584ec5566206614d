package kernels

// lanes is the width of every float32 reduction in this package (sums,
// dot products, softmax denominators, LayerNorm statistics). A reduction
// over x is defined as
//
//	acc[j] = op(… op(op(0, x[j]), x[j+16]) …, x[j+16k])   for j < 16
//	result = reduceLanes(acc)
//
// element i going to lane i mod 16, each lane in element order, missing
// elements of the last block counting as +0 (adding +0 changes no lane: a
// lane that starts at +0 never holds −0). Every
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

// The portable reductions: the lane kernels of vec_generic.go, then the
// tree. The Go lane kernels take any length (element i into lane i mod
// 16 is the definition); the assembly loads the last partial block under
// masks.

func sumGo(x []float32) float32 {
	var acc [lanes]float32
	sumLanesGo(&acc, x)
	return reduceLanes(&acc)
}

func dotGo(x, y []float32) float32 {
	var acc [lanes]float32
	dotLanesGo(&acc, x, y)
	return reduceLanes(&acc)
}

func sumSqDevGo(x []float32, mean float32) float32 {
	var acc [lanes]float32
	sumSqDevLanesGo(&acc, x, mean)
	return reduceLanes(&acc)
}

// expSubSumGo sets x = e^(x−m) and returns the sum of the new x.
func expSubSumGo(x []float32, m float32) float32 {
	var acc [lanes]float32
	expSubSumLanesGo(&acc, x, m)
	return reduceLanes(&acc)
}

// lnBackwardSumsGo returns Σ g and Σ g·x̂ for one row, g = dy·w,
// x̂ = (x−mean)·rstd, and accumulates dw += dy·x̂, db += dy.
func lnBackwardSumsGo(dy, x, w, dw, db []float32, mean, rstd float32) (sg, sgx float32) {
	var acc [2][lanes]float32
	lnBackwardSumsLanesGo(&acc, dy, x, w, dw, db, mean, rstd)
	return reduceLanes(&acc[0]), reduceLanes(&acc[1])
}
