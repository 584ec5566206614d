package optim

import (
	"math"
	"sync/atomic"
)

// ClipGradNorm scales every gradient in place so that their global L2 norm
// is at most maxNorm, and returns the norm before clipping, like
// torch.nn.utils.clip_grad_norm_: the norm is summed in float64, and when
// scale = maxNorm/(norm + 1e-6) is below 1 every Grad is multiplied by it
// (rounded to float32). maxNorm ≤ 0 turns clipping off; the norm is still
// returned for logging. A non-finite norm (a NaN or Inf gradient; float32
// squares cannot overflow the float64 sum) leaves the gradients unscaled:
// check the result, and name the culprit with [GradsFinite] before skipping
// the step.
//
// Both passes run on every core with results that do not depend on their
// number: each parameter's sum of squares is taken whole, as the serial
// loop does, and the sums are added in parameter order; the scaling is
// elementwise over fixed pieces.
func ClipGradNorm(params []Param, maxNorm float64) (preClipNorm float64) {
	n := gradLens(params)
	sums := make([]float64, len(params))
	order := bySizeDesc(n) // longest first, for balance; the order of the sum is fixed below
	total := 0
	for _, l := range n {
		total += l
	}
	forEach(len(order), total, func(i int) {
		p := order[i]
		sums[p] = sumSquares(params[p].grad())
	})
	var sum float64
	for _, s := range sums {
		sum += s
	}
	norm := math.Sqrt(sum)
	if maxNorm <= 0 || math.IsNaN(norm) || math.IsInf(norm, 0) {
		return norm
	}
	scale := maxNorm / (norm + 1e-6)
	if scale >= 1 {
		return norm
	}
	s := float32(scale)
	forPieces(n, func(pc piece) {
		g := params[pc.p].Grad[pc.lo:pc.hi]
		for i := range g {
			g[i] *= s
		}
	})
	return norm
}

// sumSquares returns Σ x² in float64, with four accumulators so the adds
// overlap.
func sumSquares(x []float32) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		a, b, c, d := float64(x[i]), float64(x[i+1]), float64(x[i+2]), float64(x[i+3])
		s0 += a * a
		s1 += b * b
		s2 += c * c
		s3 += d * d
	}
	for ; i < len(x); i++ {
		a := float64(x[i])
		s0 += a * a
	}
	return (s0 + s1) + (s2 + s3)
}

// GradsFinite reports whether every gradient value is finite; if not, it
// returns the name of the first parameter holding a NaN or ±Inf. It checks
// fixed pieces on every core.
func GradsFinite(params []Param) (name string, ok bool) {
	i := firstNonFinite(params, Param.grad)
	if i < 0 {
		return "", true
	}
	return params[i].Name, false
}

// ValuesFinite is [GradsFinite] for the parameters' values: whether every
// weight is finite, and if not the name of the first parameter that is not.
func ValuesFinite(params []Param) (name string, ok bool) {
	i := firstNonFinite(params, func(p Param) []float32 { return p.Value })
	if i < 0 {
		return "", true
	}
	return params[i].Name, false
}

// firstNonFinite returns the index of the first parameter whose slice
// (picked by of) holds a NaN or ±Inf, or -1.
func firstNonFinite(params []Param, of func(Param) []float32) int {
	n := make([]int, len(params))
	for i, p := range params {
		n[i] = len(of(p))
	}
	bad := make([]atomic.Bool, len(params))
	forPieces(n, func(pc piece) {
		if bad[pc.p].Load() {
			return
		}
		for _, g := range of(params[pc.p])[pc.lo:pc.hi] {
			if g-g != 0 { // NaN − NaN and Inf − Inf are NaN; finite x − x is 0
				bad[pc.p].Store(true)
				return
			}
		}
	})
	for i := range bad {
		if bad[i].Load() {
			return i
		}
	}
	return -1
}
