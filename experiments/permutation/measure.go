package main

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/experiments/internal/harness"
	"github.com/vitgo/vit/layers"
)

// outputs are one forward pass's results as float64: the final normed
// tokens (Graph.Features, (B·T, D)) and the logits (B, K).
type outputs struct {
	features []float64
	logits   []float64
}

// truncated returns a model that shares m's first k blocks, final norm and
// head (copies of their values): its Features are LayerNorm(block k−1's
// output), the residual stream after k blocks, normalized row by row.
func truncated(m *layers.VisionTransformer, k int) (*layers.VisionTransformer, error) {
	c := m.Config
	c.Depth = k
	out, err := layers.New(c, m.Params[0].Value.Dtype(), 0)
	if err != nil {
		return nil, err
	}
	for _, p := range out.Params {
		src := m.Param(p.Name)
		if src == nil {
			return nil, fmt.Errorf("truncated: %s not in the model", p.Name)
		}
		if err := tensor.Copy(p.Value, src.Value); err != nil {
			return nil, fmt.Errorf("truncated: %s: %w", p.Name, err)
		}
	}
	return out, nil
}

// forward runs the model in eval mode (no dropout, no drop path) on n
// images x (n, C, H, W).
func forward(m *layers.VisionTransformer, x []float64, n int) (outputs, error) {
	g, err := m.Build(n, layers.BuildOptions{})
	if err != nil {
		return outputs{}, err
	}
	switch in := g.Input.Value().Data().(type) {
	case []float64:
		copy(in, x)
	case []float32:
		copy(in, harness.Floats[float32](x))
	}
	vm := G.NewTapeMachine(g.G)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		return outputs{}, fmt.Errorf("forward: %w", err)
	}
	return outputs{features: harness.Float64s(g.Features.Value().Data()), logits: harness.Float64s(g.Logits.Value().Data())}, nil
}

// tokenDiff compares token rows (n·T, D) of the permuted images with the
// original's rows permuted the same way: patch token j of the permuted
// image against patch token perm[j] of the original. It returns the max
// |Δ| and the relative error ‖Δ‖/‖original‖ over the patch tokens, and the
// relative error of the class token (which should not move at all).
func tokenDiff(orig, permed []float64, perm []int, n, t, d int) (maxAbs, rel, relCLS float64) {
	var num, den, numC, denC float64
	for b := 0; b < n; b++ {
		row := func(v []float64, tok int) []float64 { return v[(b*t+tok)*d : (b*t+tok+1)*d] }
		for k := 0; k < d; k++ {
			c0, c1 := row(orig, 0)[k], row(permed, 0)[k]
			numC += (c1 - c0) * (c1 - c0)
			denC += c0 * c0
		}
		for j, src := range perm {
			a, p := row(orig, 1+src), row(permed, 1+j)
			for k := range a {
				e := p[k] - a[k]
				maxAbs = math.Max(maxAbs, math.Abs(e))
				num += e * e
				den += a[k] * a[k]
			}
		}
	}
	return maxAbs, math.Sqrt(num / den), math.Sqrt(numC / denC)
}

// relDiff is ‖a − b‖/‖a‖.
func relDiff(a, b []float64) float64 {
	var num, den float64
	for i := range a {
		num += (b[i] - a[i]) * (b[i] - a[i])
		den += a[i] * a[i]
	}
	return math.Sqrt(num / den)
}

// argmaxRows returns each row's argmax of (n, k) logits.
func argmaxRows(l []float64, k int) []int {
	out := make([]int, len(l)/k)
	for i := range out {
		out[i] = floats.MaxIdx(l[i*k : (i+1)*k])
	}
	return out
}
