package main

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/graph/kernels"
	"github.com/vitgo/vit/internal/parallel"
	"github.com/vitgo/vit/layers"
)

// The SGEMM-issuing ops of the graph, as graph/ names them (Op.String()).
// kindAttn and kindAttnGrad each stand for the batch·heads small products
// of one attention core (2 forward, 4 backward per image and head), issued
// as graph/op_attention.go does: the images split over the cores, each
// image's heads one after another, one single-threaded call per product.
const (
	kindLinear   = "Linear"
	kindLinearDx = "LinearDx"
	// kindLinearDxGELU is LinearDx with GELU's gradient in its epilogue
	// (graph.GELULinear's, in bf16): the same product, a third input u.
	kindLinearDxGELU = "LinearDxGELU"
	kindLinearDw     = "LinearDw"
	kindAttn         = "Attention"
	kindAttnGrad     = "AttentionGrad"
)

// floorKinds orders the kinds for the tables; forward ones first.
var floorKinds = []string{kindLinear, kindAttn, kindLinearDx, kindLinearDw, kindAttnGrad}

// forwardKind says whether a kind runs in the forward pass (and so in eval).
func forwardKind(k string) bool { return k == kindLinear || k == kindAttn }

// gemmCall is one kernels.Sgemm call with cblas row-major semantics.
type gemmCall struct {
	Kind                   string
	TA, TB                 bool
	M, N, K, LDA, LDB, LDC int
}

func (g gemmCall) flops() float64 { return 2 * float64(g.M) * float64(g.N) * float64(g.K) }

// Elements each operand spans.
func (g gemmCall) sizeA() int { return rowsOf(g.TA, g.M, g.K) * g.LDA }
func (g gemmCall) sizeB() int { return rowsOf(g.TB, g.K, g.N) * g.LDB }
func (g gemmCall) sizeC() int { return g.M * g.LDC }

func rowsOf(trans bool, rows, cols int) int {
	if trans {
		return cols
	}
	return rows
}

// floorPlan is every SGEMM one step of a graph issues: the linear layers'
// products one by one, and the attention cores by count (all alike).
type floorPlan struct {
	Batch, Tokens, Heads, Dim int
	Gemms                     []gemmCall
	Attn, AttnGrad            int  // Attention and AttentionGrad ops
	BF16                      bool // issue the bfloat16 products (kernels.SgemmBF16), as a bf16 graph does
}

// sgemm and sgemmSerial are the kernels the plan's products go through:
// kernels.Sgemm and SgemmSerial, or their bfloat16 forms.
func (p floorPlan) sgemm() func(bool, bool, int, int, int, float32, []float32, int, []float32, int, float32, []float32, int) {
	if p.BF16 {
		return kernels.SgemmBF16
	}
	return kernels.Sgemm
}

func (p floorPlan) sgemmSerial() func(bool, bool, int, int, int, float32, []float32, int, []float32, int, float32, []float32, int) {
	if p.BF16 {
		return kernels.SgemmBF16Serial
	}
	return kernels.SgemmSerial
}

// planFromGraph reads the products a tape machine running g issues from its
// ops and their inputs' shapes, as graph/op_linear.go and op_attention.go
// call kernels.Sgemm. An op it does not model that multiplies matrices
// (Gorgonia's own matmul or convolution) is an error, so the floor never
// silently misses products.
func planFromGraph(g *G.ExprGraph, c layers.Config, batch int) (floorPlan, error) {
	p := floorPlan{Batch: batch, Tokens: c.NumPatches() + 1, Heads: c.NumHeads, Dim: c.EmbedDim}
	for _, n := range g.AllNodes() {
		if n.Op() == nil {
			continue
		}
		name := n.Op().String()
		in := inputShapes(g, n)
		if inner, ok := strings.CutPrefix(name, "Recompute("); ok && len(in) > 0 { // a forward op run again (train.recompute): its product counts
			name, in = strings.TrimSuffix(inner, ")"), in[1:]
		}
		if name == kindLinearDxGELU && len(in) == 3 {
			name, in = kindLinearDx, in[:2]
		}
		switch {
		case name == kindLinear || name == kindLinearDx || name == kindLinearDw:
			if len(in) < 2 || (name != kindLinear && len(in) != 2) {
				return p, fmt.Errorf("floor: %s node %q has %d inputs", name, n.Name(), len(in))
			}
			switch m, nn := in[0][0], in[0][1]; name {
			case kindLinear: // y (M,N) = x (M,K) · wᵀ, w (N,K)
				k, nn := nn, in[1][0]
				p.Gemms = append(p.Gemms, gemmCall{kindLinear, false, true, m, nn, k, k, k, nn})
			case kindLinearDx: // dx (M,K) = dy (M,N) · w (N,K)
				k := in[1].TotalSize() / in[1][0]
				p.Gemms = append(p.Gemms, gemmCall{kindLinearDx, false, false, m, k, nn, nn, k, k})
			default: // dw (N,K) = dyᵀ (N,M) · x (M,K)
				k := in[1].TotalSize() / in[1][0]
				p.Gemms = append(p.Gemms, gemmCall{kindLinearDw, true, false, nn, k, m, nn, k, k})
			}
		case strings.HasPrefix(name, kindAttn+"(") || strings.HasPrefix(name, kindAttn+"Eval("):
			if len(in) != 1 || !in[0].Eq(tensor.Shape{batch * p.Tokens, 3 * p.Dim}) {
				return p, fmt.Errorf("floor: %s node %q has inputs %v, want one (%d, %d)", name, n.Name(), in, batch*p.Tokens, 3*p.Dim)
			}
			p.Attn++
		case name == kindAttnGrad:
			p.AttnGrad++
		case strings.Contains(name, "×") || strings.Contains(strings.ToLower(name), "conv") || strings.Contains(name, "im2col"):
			return p, fmt.Errorf("floor: op %s (node %q) multiplies matrices in a way the floor does not model", name, n.Name())
		}
	}
	return p, nil
}

// inputShapes are n's inputs' shapes, in argument order.
func inputShapes(g *G.ExprGraph, n *G.Node) []tensor.Shape {
	var out []tensor.Shape
	it := g.From(n.ID())
	for it.Next() {
		out = append(out, it.Node().(*G.Node).Shape())
	}
	return out
}

// flops sums the plan's products by kind.
func (p floorPlan) flops() map[string]float64 {
	f := map[string]float64{}
	for _, g := range p.Gemms {
		f[g.Kind] += g.flops()
	}
	hd := float64(p.Dim / p.Heads)
	perCore := float64(p.Batch*p.Heads) * 2 * float64(p.Tokens) * float64(p.Tokens) * hd // one t×t×hd product per image and head
	f[kindAttn] = float64(p.Attn) * 2 * perCore
	f[kindAttnGrad] = float64(p.AttnGrad) * 5 * perCore // the scores recomputed, then 4 products
	return f
}

// floorResult is what a modeFloor child measured: the mean time of each
// kind's products over the timed repetitions of one step's SGEMMs, their
// FLOPs, and the mean training step and eval forward timed in between.
type floorResult struct {
	Backend    string             `json:"backend"`
	Calls      int                `json:"calls"` // SGEMM calls per step, attention per head and product (floorPlan.calls)
	Ms         map[string]float64 `json:"ms"`
	FLOPs      map[string]float64 `json:"flops"`
	StepMs     float64            `json:"step_ms"`      // training step, interleaved with the floor
	EvalStepMs float64            `json:"eval_step_ms"` // eval forward, likewise
}

// TrainMs is the whole step's floor; EvalMs the forward products' floor.
func (f floorResult) TrainMs() float64 { return f.sum(f.Ms, false) }
func (f floorResult) EvalMs() float64  { return f.sum(f.Ms, true) }

// TrainShare and EvalShare are the floors as fractions of the step and the
// eval forward timed alongside them.
func (f floorResult) TrainShare() float64 { return f.TrainMs() / f.StepMs }
func (f floorResult) EvalShare() float64  { return f.EvalMs() / f.EvalStepMs }

// GFLOPS is the floor's training rate.
func (f floorResult) GFLOPS() float64 { return f.TrainFLOPs() / 1e9 / (f.TrainMs() / 1000) }

// TrainFLOPs counts the products the training floor times.
func (f floorResult) TrainFLOPs() float64 { return f.sum(f.FLOPs, false) }

func (f floorResult) sum(m map[string]float64, fwdOnly bool) float64 {
	s := 0.0
	for k, v := range m {
		if !fwdOnly || forwardKind(k) {
			s += v
		}
	}
	return s
}

// measureFloor builds the training graph as measureSteps does, reads its
// SGEMM calls, and times only those calls with the step's own threading:
// the linear products split inside kernels.Sgemm, the attention products
// spread over the cores by images, each product on one core
// (kernels.SgemmSerial). The linear products share one set of operand
// buffers (sized for the largest), so the floor is if anything optimistic
// about caches. Each
// repetition of the floor is preceded by a real training step and an eval
// forward, timed too, so that the floor's share of the step compares
// measurements taken under the same load.
func measureFloor(c layers.Config, j job) (floorResult, error) {
	tr, err := newTrainer(c, j)
	if err != nil {
		return floorResult{}, err
	}
	defer tr.close()
	p, err := planFromGraph(tr.tg.G, c, j.Batch)
	if err != nil {
		return floorResult{}, err
	}
	p.BF16 = j.Precision.IsBF16()
	res := floorResult{Backend: kernels.Backend(), Calls: p.calls(), Ms: map[string]float64{}, FLOPs: p.flops()}
	if j.Precision.IsBF16() {
		res.Backend = kernels.BF16Backend()
	}
	b := newFloorBuffers(p, j.Seed)
	total := map[string]time.Duration{}
	var stepDur, evalDur time.Duration
	for r := range j.Warmup + j.Steps {
		t0 := time.Now()
		if _, err := tr.step(r); err != nil {
			return res, err
		}
		t1 := time.Now()
		if err := tr.forward(); err != nil {
			return res, err
		}
		t2 := time.Now()
		d := p.run(b)
		if r < j.Warmup {
			continue
		}
		stepDur += t1.Sub(t0)
		evalDur += t2.Sub(t1)
		for k, v := range d {
			total[k] += v
		}
	}
	for k, v := range total {
		res.Ms[k] = v.Seconds() * 1000 / float64(j.Steps)
	}
	res.StepMs = stepDur.Seconds() * 1000 / float64(j.Steps)
	res.EvalStepMs = evalDur.Seconds() * 1000 / float64(j.Steps)
	return res, nil
}

// calls counts the plan's SGEMM calls with the attention products counted
// per head and product, not per image (the "strided = 1" convention of the
// table, from when one SgemmStrided call covered the batch's images for one
// head): 2 forward and 5 backward (the scores recomputed, then 4) per
// attention core and head. Each of those stands for Batch
// kernels.SgemmSerial calls, one per image.
func (p floorPlan) calls() int {
	return len(p.Gemms) + (2*p.Attn+5*p.AttnGrad)*p.Heads
}

// floorBuffers are the operands the floor's products read and write.
type floorBuffers struct {
	a, b, c []float32 // linear products, sized for the largest
	// attention: qkv and its gradient (B·T, 3D), the output and its
	// gradient (B·T, D)
	qkv, dqkv, y, dy []float32
}

func newFloorBuffers(p floorPlan, seed uint64) *floorBuffers {
	var na, nb, nc int
	for _, g := range p.Gemms {
		na, nb, nc = max(na, g.sizeA()), max(nb, g.sizeB()), max(nc, g.sizeC())
	}
	rng := rand.New(rand.NewPCG(seed, 11))
	fill := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(rng.Float64() - 0.5)
		}
		return s
	}
	bt, d := p.Batch*p.Tokens, p.Dim
	return &floorBuffers{a: fill(na), b: fill(nb), c: fill(nc), qkv: fill(bt * 3 * d), dqkv: fill(bt * 3 * d), y: fill(bt * d), dy: fill(bt * d)}
}

// run issues one step's products and returns the time spent on each kind.
func (p floorPlan) run(b *floorBuffers) map[string]time.Duration {
	d := map[string]time.Duration{}
	sgemm := p.sgemm()
	for _, g := range p.Gemms {
		t0 := time.Now()
		sgemm(g.TA, g.TB, g.M, g.N, g.K, 1, b.a, g.LDA, b.b, g.LDB, 0, b.c, g.LDC)
		d[g.Kind] += time.Since(t0)
	}
	for range p.Attn {
		t0 := time.Now()
		p.attnForward(b)
		d[kindAttn] += time.Since(t0)
	}
	for range p.AttnGrad {
		t0 := time.Now()
		p.attnBackward(b)
		d[kindAttnGrad] += time.Since(t0)
	}
	return d
}

// attnForward issues graph's float32 attention forward products as
// graph/op_attention.go's attnForward does: the (image, head) pairs split
// over the cores as the graph ops split them (parallel.ForGrain), and for each pair scores = scale·q·kᵀ (T×T×hd, into a
// (T, T) scratch: a training graph keeps no probabilities), then out = P·v
// (T×hd×T) into the head's columns of the (B·T, D) output; q, k and v are
// read in place from the (B·T, 3D) qkv rows. The softmax between the two is
// not timed.
func (p floorPlan) attnForward(b *floorBuffers) {
	t, d, nh := p.Tokens, p.Dim, p.Heads
	hd := d / nh
	sgemmSerial := p.sgemmSerial()
	parallel.ForGrain(p.Batch*nh, 1, func(lo, hi int) {
		pr := make([]float32, t*t)
		for j := lo; j < hi; j++ {
			i, h := j/nh, j%nh
			base := i * t * 3 * d
			sgemmSerial(false, true, t, t, hd, 1, b.qkv[base+h*hd:], 3*d, b.qkv[base+d+h*hd:], 3*d, 0, pr, t)
			sgemmSerial(false, false, t, hd, t, 1, pr, t, b.qkv[base+2*d+h*hd:], 3*d, 0, b.y[i*t*d+h*hd:], d)
		}
	})
}

// attnBackward issues the backward products as attnBackward does, split
// over the pairs likewise: per image and head the recomputed scores
// scale·q·kᵀ (the probabilities are not kept), dV = Pᵀ·dO and dP = dO·vᵀ,
// then (after the softmax backward, not timed here) dQ = scale·dS·k and
// dK = scale·dSᵀ·q.
func (p floorPlan) attnBackward(b *floorBuffers) {
	t, d, nh := p.Tokens, p.Dim, p.Heads
	hd := d / nh
	sgemmSerial := p.sgemmSerial()
	parallel.ForGrain(p.Batch*nh, 1, func(lo, hi int) {
		pr, dp := make([]float32, t*t), make([]float32, t*t)
		for j := lo; j < hi; j++ {
			i, h := j/nh, j%nh
			base := i * t * 3 * d
			do := b.dy[i*t*d+h*hd:]
			sgemmSerial(false, true, t, t, hd, 1, b.qkv[base+h*hd:], 3*d, b.qkv[base+d+h*hd:], 3*d, 0, pr, t)
			sgemmSerial(true, false, t, hd, t, 1, pr, t, do, d, 0, b.dqkv[base+2*d+h*hd:], 3*d)
			sgemmSerial(false, true, t, t, hd, 1, do, d, b.qkv[base+2*d+h*hd:], 3*d, 0, dp, t)
			sgemmSerial(false, false, t, hd, t, 1, dp, t, b.qkv[base+d+h*hd:], 3*d, 0, b.dqkv[base+h*hd:], 3*d)
			sgemmSerial(true, false, t, hd, t, 1, dp, t, b.qkv[base+h*hd:], 3*d, 0, b.dqkv[base+d+h*hd:], 3*d)
		}
	})
}
