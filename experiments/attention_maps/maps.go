package main

import (
	"fmt"

	"github.com/vitgo/vit/experiments/internal/harness"
	"github.com/vitgo/vit/layers/posembed"
)

// clsAttention returns, for every sample, the class token's attention to the
// patch tokens in one layer, averaged over heads: probs is (B, H, T, T) and
// the result is (B, T−1), each row renormalised to sum to 1 over the
// patches (the class token's attention to itself is dropped).
func clsAttention(probs []float64, b, h, t int) [][]float64 {
	out := make([][]float64, b)
	for s := range b {
		row := make([]float64, t-1)
		for hd := range h {
			p := probs[((s*h+hd)*t)*t:][:t] // row 0 (the class token) of head hd
			for j := 1; j < t; j++ {
				row[j-1] += p[j] / float64(h)
			}
		}
		out[s] = normalise(row)
	}
	return out
}

// rollout is attention rollout (Abnar & Zuidema 2020): per layer the
// head-mean attention A is mixed with the residual path, Â = ½A + ½I, rows
// renormalised, and the layers are multiplied, R = Â_L ⋯ Â_2 Â_1. It
// returns each sample's class-token row of R over the patch tokens, (B, T−1),
// renormalised. layers holds each layer's (B, H, T, T) probabilities.
func rollout(layers [][]float64, b, h, t int) ([][]float64, error) {
	out := make([][]float64, b)
	for s := range b {
		r := identity(t)
		for l, probs := range layers {
			if len(probs) != b*h*t*t {
				return nil, fmt.Errorf("rollout: layer %d has %d probabilities, want %d", l, len(probs), b*h*t*t)
			}
			a := make([]float64, t*t) // Â of this layer
			for hd := range h {
				p := probs[(s*h+hd)*t*t:][:t*t]
				for i := range a {
					a[i] += 0.5 * p[i] / float64(h)
				}
			}
			for i := range t {
				a[i*t+i] += 0.5
				normalise(a[i*t : (i+1)*t])
			}
			r = matmul(a, r, t) // Â_l · R_{l−1}
		}
		out[s] = normalise(append([]float64(nil), r[1:t]...))
	}
	return out, nil
}

func identity(t int) []float64 {
	m := make([]float64, t*t)
	for i := range t {
		m[i*t+i] = 1
	}
	return m
}

// matmul returns a·b for (t, t) row-major matrices.
func matmul(a, b []float64, t int) []float64 {
	c := make([]float64, t*t)
	for i := range t {
		for k := range t {
			aik := a[i*t+k]
			if aik == 0 {
				continue
			}
			for j := range t {
				c[i*t+j] += aik * b[k*t+j]
			}
		}
	}
	return c
}

// normalise scales v in place to sum to 1 (unchanged if its sum is 0).
func normalise(v []float64) []float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	if s != 0 {
		for i := range v {
			v[i] /= s
		}
	}
	return v
}

// upsample resizes a (gh, gw) map to (h, w) bilinearly with PyTorch's
// align_corners=False convention, by layers/posembed's resampler.
func upsample(m []float64, gh, gw, h, w int) ([]float64, error) {
	u, err := posembed.Resample(harness.Floats[float32](m), 1, 0, gh, gw, h, w, posembed.Options{Mode: posembed.Bilinear})
	return harness.Floats[float64](u), err
}

// inkMass is the share of a patch map's mass on the patches holding ink:
// patches whose mean pixel (uint8 image, row-major h×w, patch p) exceeds
// thresh. It also returns the share of patches that hold ink (the value a
// uniform map would get).
func inkMass(m []float64, pix []uint8, h, w, p int, thresh float64) (mass, frac float64) {
	gw := w / p
	n := 0
	for i, v := range m {
		r, c := i/gw, i%gw
		var s float64
		for y := r * p; y < (r+1)*p; y++ {
			for x := c * p; x < (c+1)*p; x++ {
				s += float64(pix[y*w+x])
			}
		}
		if s/float64(p*p) > thresh {
			mass += v
			n++
		}
	}
	return mass, float64(n) / float64(len(m))
}
