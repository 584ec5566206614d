package main

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/experiments/internal/harness"
	"github.com/vitgo/vit/layers"
)

// shape is one patch-embedding problem: B images of C×H×W cut into P×P
// patches, each projected to D features.
type shape struct {
	Name             string
	B, C, H, W, P, D int
}

// Tokens is the patch count per image.
func (s shape) Tokens() int { return (s.H / s.P) * (s.W / s.P) }

// result is one form's output and gradients for the same inputs.
type result struct {
	out, dx, dw, db []float64
}

// problem holds the shared inputs of one shape: images, weight, bias and the
// fixed cotangent R the scalar loss sum(y ⊙ R) is built from.
type problem struct {
	s          shape
	x, w, b, r []float64
}

func newProblem(s shape, seed uint64) problem {
	rng := rand.New(rand.NewPCG(seed, 1))
	fill := func(n int, scale float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = scale * rng.NormFloat64()
		}
		return v
	}
	fanIn := float64(s.C * s.P * s.P)
	return problem{
		s: s,
		x: fill(s.B*s.C*s.H*s.W, 1),
		w: fill(s.D*s.C*s.P*s.P, 1/math.Sqrt(fanIn)),
		b: fill(s.D, 0.1),
		r: fill(s.B*s.Tokens()*s.D, 1),
	}
}

// run computes one form's output and, with grads, the gradients of
// sum(y ⊙ R) with respect to the images, weight and bias, in dtype dt
// (float64 or float32), returned as float64. w replaces the problem's
// weight (a control feeds it in the wrong order).
func run(pr problem, f layers.PatchEmbedForm, w []float64, grads bool, dt tensor.Dtype) (result, error) {
	s := pr.s
	g := G.NewGraph()
	dense := func(v []float64, sh ...int) *tensor.Dense {
		if dt == tensor.Float32 {
			return tensor.New(tensor.WithShape(sh...), tensor.WithBacking(harness.Floats[float32](v)))
		}
		return tensor.New(tensor.WithShape(sh...), tensor.WithBacking(append([]float64(nil), v...)))
	}
	x := G.NewTensor(g, dt, 4, G.WithName("x"), G.WithValue(dense(pr.x, s.B, s.C, s.H, s.W)))
	wn := G.NewTensor(g, dt, 4, G.WithName("w"), G.WithValue(dense(w, s.D, s.C, s.P, s.P)))
	bn := G.NewVector(g, dt, G.WithName("b"), G.WithValue(dense(pr.b, s.D)))
	y, err := layers.PatchEmbed(f, x, wn, bn, s.P)
	if err != nil {
		return result{}, err
	}
	var gradNodes G.Nodes
	if grads {
		r := G.NewMatrix(g, dt, G.WithName("r"), G.WithValue(dense(pr.r, s.B*s.Tokens(), s.D)))
		prod, err := G.HadamardProd(y, r)
		if err != nil {
			return result{}, err
		}
		loss, err := G.Sum(prod)
		if err != nil {
			return result{}, err
		}
		if gradNodes, err = G.Grad(loss, x, wn, bn); err != nil {
			return result{}, err
		}
	}
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		return result{}, err
	}
	val := func(n *G.Node) []float64 { return harness.Float64s(n.Value().Data()) }
	res := result{out: val(y)}
	if grads {
		res.dx, res.dw, res.db = val(gradNodes[0]), val(gradNodes[1]), val(gradNodes[2])
	}
	return res, nil
}

// timeFwdBwd is the median wall time of one float32 forward + backward pass
// of a form, over reps runs after a warm-up.
func timeFwdBwd(s shape, f layers.PatchEmbedForm, reps int) (time.Duration, error) {
	g := G.NewGraph()
	x := G.NewTensor(g, tensor.Float32, 4, G.WithShape(s.B, s.C, s.H, s.W), G.WithName("x"), G.WithInit(G.Gaussian(0, 1)))
	w := G.NewTensor(g, tensor.Float32, 4, G.WithShape(s.D, s.C, s.P, s.P), G.WithName("w"), G.WithInit(G.Gaussian(0, 0.05)))
	b := G.NewVector(g, tensor.Float32, G.WithShape(s.D), G.WithName("b"), G.WithInit(G.Zeroes()))
	y, err := layers.PatchEmbed(f, x, w, b, s.P)
	if err != nil {
		return 0, err
	}
	loss, err := G.Sum(y)
	if err != nil {
		return 0, err
	}
	if _, err := G.Grad(loss, x, w, b); err != nil {
		return 0, err
	}
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	var ts []time.Duration
	for i := 0; i <= reps; i++ {
		t0 := time.Now()
		if err := vm.RunAll(); err != nil {
			return 0, err
		}
		vm.Reset()
		if i > 0 {
			ts = append(ts, time.Since(t0))
		}
	}
	slices.Sort(ts)
	return ts[len(ts)/2], nil
}

// channelsLastOrder returns the weight [D, C, P, P] permuted to [D, P, P, C]
// and read back as if it were [D, C, P, P]: the values a channels-last
// unfold ((p1 p2 c), as einops-style ViTs flatten patches) would need,
// copied into our layout without undoing the permutation.
func channelsLastOrder(w []float64, d, c, p int) []float64 {
	out := make([]float64, len(w))
	o := 0
	for di := 0; di < d; di++ {
		for y := 0; y < p; y++ {
			for x := 0; x < p; x++ {
				for ci := 0; ci < c; ci++ {
					out[o] = w[((di*c+ci)*p+y)*p+x]
					o++
				}
			}
		}
	}
	return out
}

// transposedKernel swaps the kernel's row and column axes, [D, C, P, P] →
// [D, C, Pᵀ]: the mistake of an unfold that walks a patch column-major.
func transposedKernel(w []float64, d, c, p int) []float64 {
	out := make([]float64, len(w))
	for dc := 0; dc < d*c; dc++ {
		for y := 0; y < p; y++ {
			for x := 0; x < p; x++ {
				out[(dc*p+y)*p+x] = w[(dc*p+x)*p+y]
			}
		}
	}
	return out
}
