package graph

import (
	"math/rand/v2"
	"slices"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// planNet is one pre-norm transformer block with a head and a loss, built
// from our ops plus a Gorgonia Add (an op that is not ours, whose inputs the
// planner must keep alive), and the gradients of everything.
type planNet struct {
	g       *G.ExprGraph
	x, tgt  *G.Node
	mid     *G.Node // the attention output, a node that backward also reads
	loss    *G.Node
	grads   G.Nodes
	weights G.Nodes
}

func newPlanNet(t *testing.T, dt tensor.Dtype) *planNet {
	t.Helper()
	const b, tok, d, heads, classes = 3, 5, 8, 2, 4
	g := G.NewGraph()
	n := &planNet{g: g}
	n.x = randNode(g, dt, "x", 1, 1, b*tok, d)
	w := func(name string, seed uint64, shape ...int) *G.Node {
		v := randNode(g, dt, name, 0.3, seed, shape...)
		n.weights = append(n.weights, v)
		return v
	}
	must := func(v *G.Node, err error) *G.Node {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	h := must(LayerNorm(n.x, w("n1.w", 2, d), w("n1.b", 3, d), 1e-6))
	qkv := must(Linear(h, w("qkv.w", 4, 3*d, d), w("qkv.b", 5, 3*d)))
	n.mid = must(Attention(qkv, b, tok, heads))
	a := must(Linear(n.mid, w("proj.w", 6, d, d), w("proj.b", 7, d)))
	x1 := must(Add(n.x, a))
	h2 := must(LayerNorm(x1, w("n2.w", 8, d), w("n2.b", 9, d), 1e-6))
	f := must(GELU(must(Linear(h2, w("fc1.w", 10, 2*d, d), w("fc1.b", 11, 2*d))), GELUExact))
	f2 := must(Linear(f, w("fc2.w", 12, d, 2*d), w("fc2.b", 13, d)))
	x2 := must(G.Add(x1, f2)) // Gorgonia's own op
	r := must(Readout(x2, b, true))
	logits := must(Linear(r, w("head.w", 14, classes, d), w("head.b", 15, classes)))
	n.tgt = randNode(g, dt, "tgt", 0, 16, b, classes)
	n.loss = must(SoftmaxCrossEntropy(logits, n.tgt))
	wrt := append(G.Nodes{n.x}, n.weights...)
	n.grads = must2(t)(G.Grad(n.loss, wrt...))
	return n
}

func must2(t *testing.T) func(G.Nodes, error) G.Nodes {
	return func(ns G.Nodes, err error) G.Nodes {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return ns
	}
}

// run sets the input and targets from seed, runs the tape once and returns
// the loss, the attention output and every gradient, copied.
func (n *planNet) run(t *testing.T, vm G.VM, seed uint64) [][]float64 {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 9))
	fill := func(v G.Value, f func(i int) float64) {
		switch d := v.Data().(type) {
		case []float32:
			for i := range d {
				d[i] = float32(f(i))
			}
		case []float64:
			for i := range d {
				d[i] = f(i)
			}
		}
	}
	fill(n.x.Value(), func(int) float64 { return rng.NormFloat64() })
	fill(n.tgt.Value(), func(i int) float64 { return float64(i%4) / 6 })
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	defer vm.Reset()
	var out [][]float64
	for _, v := range append(G.Nodes{n.loss, n.mid}, n.grads...) {
		out = append(out, widen(v.Value().Data()))
	}
	return out
}

func widen(d any) []float64 {
	switch d := d.(type) {
	case []float32:
		out := make([]float64, len(d))
		for i, v := range d {
			out[i] = float64(v)
		}
		return out
	case []float64:
		return slices.Clone(d)
	case float32:
		return []float64{float64(d)}
	case float64:
		return []float64{d}
	}
	return nil
}

func equalRuns(a, b [][]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !slices.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// TestPlanBuffersUnchanged: a planned graph computes bit for bit what the
// unplanned one does, over several runs, while its memory shrinks; a
// second graph sharing the arena and running in between changes nothing;
// and the control (every output forced into one slot) does change results,
// so the comparison can fail.
func TestPlanBuffersUnchanged(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		t.Run(dt.String(), func(t *testing.T) {
			ref := newPlanNet(t, dt)
			rvm := G.NewTapeMachine(ref.g)
			defer rvm.Close()

			a := NewArena()
			pl := newPlanNet(t, dt)
			st, err := PlanBuffers(pl.g, a, pl.mid)
			if err != nil {
				t.Fatal(err)
			}
			if st.Planned == 0 || a.Bytes() >= st.Bytes {
				t.Fatalf("plan shares nothing: %+v, arena %d bytes", st, a.Bytes())
			}
			t.Logf("%+v; arena %d of %d bytes", st, a.Bytes(), st.Bytes)
			pvm := G.NewTapeMachine(pl.g)
			defer pvm.Close()

			// A second graph planned into the same arena, run between steps.
			other := newPlanNet(t, dt)
			if _, err := PlanBuffers(other.g, a); err != nil {
				t.Fatal(err)
			}
			ovm := G.NewTapeMachine(other.g)
			defer ovm.Close()

			for step := uint64(1); step <= 3; step++ {
				want := ref.run(t, rvm, step)
				got := pl.run(t, pvm, step)
				if !equalRuns(want, got) {
					t.Fatalf("step %d: planned graph differs from the unplanned one", step)
				}
				other.run(t, ovm, 100+step)
			}

			// Control: all planned outputs in one slot.
			bad := newPlanNet(t, dt)
			one := &slot{dt: dt}
			for _, n := range bad.g.AllNodes() {
				if op, ok := n.Op().(bufferedOp); ok && n.Dims() > 0 && n != bad.loss && !slices.Contains(bad.grads, n) {
					one.size = max(one.size, n.Shape().TotalSize())
					op.outBuffer().slot = one
				}
			}
			bvm := G.NewTapeMachine(bad.g)
			defer bvm.Close()
			if equalRuns(ref.run(t, rvm, 7), bad.run(t, bvm, 7)) {
				t.Fatal("control: one shared slot for every output left the results unchanged")
			}
		})
	}
}

// TestPlanBuffersKeep: a kept node's value survives the run; an unknown
// node is an error.
func TestPlanBuffersKeep(t *testing.T) {
	n := newPlanNet(t, tensor.Float64)
	if _, err := PlanBuffers(n.g, NewArena(), n.mid); err != nil {
		t.Fatal(err)
	}
	if n.mid.Op().(bufferedOp).outBuffer().slot != nil {
		t.Errorf("kept node %v was planned into a slot", n.mid.Name())
	}
	other := G.NewGraph()
	stray := G.NewScalar(other, tensor.Float64, G.WithName("stray"))
	if _, err := PlanBuffers(n.g, NewArena(), stray); err == nil {
		t.Error("keeping a node of another graph: no error")
	}
}

// TestPlanSlack: a small output that lives to the end of the run does not
// take a free slot more than maxSlack times its size (a large output's,
// freed before it), which a later large output then needs: the chain
// x → a (M, 4K) → b (M, K) → c (M, K) → d (M, 4K) → e (M, K), out = c + e,
// plans into slots of 4K, K and K (and d reuses a's), not 4K, K and 4K.
func TestPlanSlack(t *testing.T) {
	const m, k = 16, 8
	g := G.NewGraph()
	must := func(v *G.Node, err error) *G.Node {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	x := randNode(g, tensor.Float32, "x", 1, 1, m, k)
	lin := func(in *G.Node, name string, seed uint64, out int) *G.Node {
		return must(Linear(in, randNode(g, tensor.Float32, name, 0.3, seed, out, in.Shape()[1]), nil))
	}
	a := lin(x, "w1", 2, 4*k)
	b := lin(a, "w2", 3, k)
	c := lin(b, "w3", 4, k)
	d := lin(c, "w4", 5, 4*k)
	e := lin(d, "w5", 6, k)
	out := must(Add(c, e))
	st, err := PlanBuffers(g, NewArena(), out)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(m*(4*k+k+k)) * 4; int64(st.ArenaMiB*(1<<20)) != want {
		t.Errorf("arena %d bytes, want %d (slots of %d, %d and %d floats)", int64(st.ArenaMiB*(1<<20)), want, m*4*k, m*k, m*k)
	}
}
