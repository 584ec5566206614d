package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/layers"
)

// shape is one patch-embedding problem: B images of C×H×W cut into P×P
// patches, each projected to D features.
type shape struct {
	name          string
	B, C, H, W, P int
	D             int
}

// tokens is the patch count per image.
func (s shape) tokens() int { return (s.H / s.P) * (s.W / s.P) }

// form says how the patch embedding is computed from the weight [D, C, P, P].
type form int

const (
	formConv   form = iota // Gorgonia Conv2d (im2col), stride P, then channels-last + bias
	formLinear             // graph.Patchify + graph.Linear (layers.PatchLinear)
)

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
		r: fill(s.B*s.tokens()*s.D, 1),
	}
}

// patchEmbed is layers' patch embedding written out on graph nodes:
// (B, C, H, W) → (B·N, D).
func patchEmbed(f form, x, w, b *G.Node, p int) (*G.Node, error) {
	if f == formConv {
		y, err := G.Conv2d(x, w, tensor.Shape{p, p}, []int{0, 0}, []int{p, p}, []int{1, 1}) // (B, D, gh, gw)
		if err != nil {
			return nil, err
		}
		if y, err = graph.ChannelsLast(y); err != nil { // (B·N, D)
			return nil, err
		}
		return G.BroadcastAdd(y, b, nil, []byte{0})
	}
	cols, err := graph.Patchify(x, p) // (B·N, C·P·P)
	if err != nil {
		return nil, err
	}
	return graph.Linear(cols, w, b) // (B·N, D)
}

// run computes one form's output and, with grads, the gradients of
// sum(y ⊙ R) with respect to the images, weight and bias, in dtype dt
// (float64 or float32), returned as float64. w replaces the problem's
// weight (a control feeds it in the wrong order).
func run(pr problem, f form, w []float64, grads bool, dt tensor.Dtype) (result, error) {
	s := pr.s
	g := G.NewGraph()
	dense := func(v []float64, sh ...int) *tensor.Dense {
		if dt == tensor.Float32 {
			v32 := make([]float32, len(v))
			for i, x := range v {
				v32[i] = float32(x)
			}
			return tensor.New(tensor.WithShape(sh...), tensor.WithBacking(v32))
		}
		return tensor.New(tensor.WithShape(sh...), tensor.WithBacking(append([]float64(nil), v...)))
	}
	x := G.NewTensor(g, dt, 4, G.WithName("x"), G.WithValue(dense(pr.x, s.B, s.C, s.H, s.W)))
	wn := G.NewTensor(g, dt, 4, G.WithName("w"), G.WithValue(dense(w, s.D, s.C, s.P, s.P)))
	bn := G.NewVector(g, dt, G.WithName("b"), G.WithValue(dense(pr.b, s.D)))
	y, err := patchEmbed(f, x, wn, bn, s.P)
	if err != nil {
		return result{}, err
	}
	var gradNodes G.Nodes
	if grads {
		r := G.NewMatrix(g, dt, G.WithName("r"), G.WithValue(dense(pr.r, s.B*s.tokens(), s.D)))
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
	val := func(n *G.Node) []float64 {
		switch d := n.Value().Data().(type) {
		case []float32:
			out := make([]float64, len(d))
			for i, v := range d {
				out[i] = float64(v)
			}
			return out
		default:
			return append([]float64(nil), d.([]float64)...)
		}
	}
	res := result{out: val(y)}
	if grads {
		res.dx, res.dw, res.db = val(gradNodes[0]), val(gradNodes[1]), val(gradNodes[2])
	}
	return res, nil
}

// timeFwdBwd is the median wall time of one float32 forward + backward pass
// of a form, over reps runs after a warm-up.
func timeFwdBwd(s shape, f form, reps int) (time.Duration, error) {
	g := G.NewGraph()
	x := G.NewTensor(g, tensor.Float32, 4, G.WithShape(s.B, s.C, s.H, s.W), G.WithName("x"), G.WithInit(G.Gaussian(0, 1)))
	w := G.NewTensor(g, tensor.Float32, 4, G.WithShape(s.D, s.C, s.P, s.P), G.WithName("w"), G.WithInit(G.Gaussian(0, 0.05)))
	b := G.NewVector(g, tensor.Float32, G.WithShape(s.D), G.WithName("b"), G.WithInit(G.Zeroes()))
	y, err := patchEmbed(f, x, w, b, s.P)
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
	return median(ts), nil
}

func median(ts []time.Duration) time.Duration {
	for i := range ts {
		for j := i + 1; j < len(ts); j++ {
			if ts[j] < ts[i] {
				ts[i], ts[j] = ts[j], ts[i]
			}
		}
	}
	return ts[len(ts)/2]
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

// maxAbsDiff is max_i |a_i − b_i|.
func maxAbsDiff(a, b []float64) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	m := 0.0
	for i := range a {
		m = math.Max(m, math.Abs(a[i]-b[i]))
	}
	return m
}

// maxAbs is max_i |a_i|, the scale a difference is read against.
func maxAbs(a []float64) float64 {
	m := 0.0
	for _, v := range a {
		m = math.Max(m, math.Abs(v))
	}
	return m
}

// modelCheck builds a small float64 ViT twice from the same seed, once with
// each patch-embedding form, and compares the logits and every parameter's
// gradient of sum(logits ⊙ R): the layers' own code paths end to end.
func modelCheck(seed uint64) (logitDiff, gradDiff, logitScale float64, err error) {
	cfg := layers.DefaultConfig()
	cfg.ImgSize, cfg.PatchSize, cfg.InChans = layers.Size2{28, 28}, 4, 1
	cfg.EmbedDim, cfg.Depth, cfg.NumHeads, cfg.MLPRatio, cfg.NumClasses = 64, 2, 4, 2, 10
	cfg.ZeroInitHead = false // a zero head would zero every gradient below it
	const batch = 4
	rng := rand.New(rand.NewPCG(seed, 2))
	x := make([]float64, batch*28*28)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	r := make([]float64, batch*cfg.NumClasses)
	for i := range r {
		r[i] = rng.NormFloat64()
	}
	type out struct{ logits, grads []float64 }
	eval := func(f layers.PatchEmbedForm) (out, error) {
		c := cfg
		c.PatchEmbed = f
		m, err := layers.New(c, tensor.Float64, seed)
		if err != nil {
			return out{}, err
		}
		gr, err := m.Build(batch, layers.BuildOptions{})
		if err != nil {
			return out{}, err
		}
		copy(gr.Input.Value().Data().([]float64), x)
		rn := G.NewMatrix(gr.G, tensor.Float64, G.WithName("r"),
			G.WithValue(tensor.New(tensor.WithShape(batch, c.NumClasses), tensor.WithBacking(append([]float64(nil), r...)))))
		prod, err := G.HadamardProd(gr.Logits, rn)
		if err != nil {
			return out{}, err
		}
		loss, err := G.Sum(prod)
		if err != nil {
			return out{}, err
		}
		gn, err := G.Grad(loss, append(G.Nodes{gr.Input}, gr.Params...)...)
		if err != nil {
			return out{}, err
		}
		vm := G.NewTapeMachine(gr.G)
		defer vm.Close()
		if err := vm.RunAll(); err != nil {
			return out{}, err
		}
		o := out{logits: append([]float64(nil), gr.Logits.Value().Data().([]float64)...)}
		for _, n := range gn {
			o.grads = append(o.grads, n.Value().Data().([]float64)...)
		}
		return o, nil
	}
	conv, err := eval(layers.PatchConv)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("conv model: %w", err)
	}
	lin, err := eval(layers.PatchLinear)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("linear model: %w", err)
	}
	return maxAbsDiff(conv.logits, lin.logits), maxAbsDiff(conv.grads, lin.grads), maxAbs(conv.logits), nil
}
