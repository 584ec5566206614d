package optim

import "math"

// ClipGradNorm scales every gradient in place so that their global L2 norm
// is at most maxNorm, and returns the norm before clipping, like
// torch.nn.utils.clip_grad_norm_: the norm is summed in float64, and when
// scale = maxNorm/(norm + 1e-6) is below 1 every Grad is multiplied by it
// (rounded to float32). maxNorm ≤ 0 turns clipping off; the norm is still
// returned for logging. A non-finite norm (a NaN or Inf gradient; float32
// squares cannot overflow the float64 sum) leaves the gradients unscaled:
// check the result, and name the culprit with [GradsFinite] before skipping
// the step.
func ClipGradNorm(params []Param, maxNorm float64) (preClipNorm float64) {
	var sum float64
	for _, p := range params {
		sum += sumSquares(p.Grad)
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
	for _, p := range params {
		for i := range p.Grad {
			p.Grad[i] *= s
		}
	}
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
// returns the name of the first parameter holding a NaN or ±Inf.
func GradsFinite(params []Param) (name string, ok bool) {
	for _, p := range params {
		for _, g := range p.Grad {
			if g-g != 0 { // NaN − NaN and Inf − Inf are NaN; finite x − x is 0
				return p.Name, false
			}
		}
	}
	return "", true
}
