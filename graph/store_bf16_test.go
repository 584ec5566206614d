package graph

import (
	"math"
	"runtime"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/graph/kernels"
)

// The ways mlpRun builds an MLP's activation and fc2.
const (
	mlpFloat32 = iota // GELU, then Linear
	mlpWords          // GELU with StoreBF16, then Linear
	mlpFused          // GELULinear (the LayerNorm with StoreBF16 too)
)

// mlpRun builds y = fc2(GELU(fc1(LayerNorm(x)))) in bf16 (the LayerNorm
// and GELU outputs kept as bfloat16 words in mode mlpWords, the GELU and
// fc2 one op in mlpFused), with the cost Σ y⊙R, plans its buffers into an
// arena when planned, runs it twice, and returns y then the gradients of
// x, fc1's weight and bias, fc2's weight and bias, the LayerNorm's weight
// and bias, and the node fc2 reads.
func mlpRun(t *testing.T, approx GELUApprox, mode int, planned bool) ([][]float32, *G.Node) {
	t.Helper()
	const m, k, hidden, n = 37, 19, 70, 11
	g := G.NewGraph()
	x := randNode(g, tensor.Float32, "x", 1, 1, m, k)
	w1 := randNode(g, tensor.Float32, "w1", 0.3, 2, hidden, k)
	b1 := randNode(g, tensor.Float32, "b1", 0.3, 3, hidden)
	w2 := randNode(g, tensor.Float32, "w2", 0.3, 4, n, hidden)
	b2 := randNode(g, tensor.Float32, "b2", 0.3, 5, n)
	lw := randNode(g, tensor.Float32, "lw", 0.3, 6, k)
	lb := randNode(g, tensor.Float32, "lb", 0.3, 7, k)
	bf := WithPrecision(BF16)
	var opts []OpOption
	if mode != mlpFloat32 {
		opts = append(opts, StoreBF16())
	}
	norm, err := LayerNorm(x, lw, lb, 1e-6, opts...)
	if err != nil {
		t.Fatal(err)
	}
	h, err := Linear(norm, w1, b1, bf)
	if err != nil {
		t.Fatal(err)
	}
	act, y := h, (*G.Node)(nil)
	if mode == mlpFused {
		y, err = GELULinear(h, w2, b2, approx, bf)
	} else if act, err = GELU(h, approx, opts...); err == nil {
		y, err = Linear(act, w2, b2, bf)
	}
	if err != nil {
		t.Fatal(err)
	}
	r := randNode(g, tensor.Float32, "R", 1, 9, m, n)
	cost := G.Must(G.Sum(G.Must(G.HadamardProd(y, r))))
	return runTwice(t, g, cost, y, G.Nodes{x, w1, b1, w2, b2, lw, lb}, planned), act
}

// runTwice differentiates cost with respect to wrt, plans g's buffers
// into an arena when planned, runs g twice, and returns y's value and the
// gradients of wrt.
func runTwice(t *testing.T, g *G.ExprGraph, cost, y *G.Node, wrt G.Nodes, planned bool) [][]float32 {
	t.Helper()
	grads, err := G.Grad(cost, wrt...)
	if err != nil {
		t.Fatal(err)
	}
	if planned {
		if _, err := PlanBuffers(g, NewArena(), append(G.Nodes{y}, grads...)...); err != nil {
			t.Fatal(err)
		}
	}
	vm := G.NewTapeMachine(g, G.BindDualValues(wrt...))
	defer vm.Close()
	for range 2 {
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		vm.Reset()
	}
	out := [][]float32{f32s(t, y.Value())}
	for _, n := range wrt {
		gv, err := n.Grad()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f32s(t, gv))
	}
	return out
}

// TestStoreBF16MLP: a LayerNorm and MLP whose LayerNorm and GELU outputs
// are kept as bfloat16 words, or whose GELU and fc2 are one GELULinear,
// give the bits of the ones that keep them in float32, forward and every
// gradient, with and without planned buffers, in both GELU forms; the
// words really are words.
func TestStoreBF16MLP(t *testing.T) {
	names := []string{"y", "dx", "dw1", "db1", "dw2", "db2", "dlw", "dlb"}
	for _, approx := range []GELUApprox{GELUExact, GELUTanh} {
		for _, planned := range []bool{false, true} {
			want, _ := mlpRun(t, approx, mlpFloat32, planned)
			for _, mode := range []int{mlpWords, mlpFused} {
				got, act := mlpRun(t, approx, mode, planned)
				if dt := act.Value().Dtype(); mode == mlpWords && dt != tensor.Uint16 {
					t.Fatalf("%v planned=%t: the GELU output is %v, want bfloat16 words (uint16)", approx, planned, dt)
				}
				for i := range want {
					if !sameBits32(got[i], want[i]) {
						t.Errorf("%v planned=%t mode %d: %s differs from float32 activations", approx, planned, mode, names[i])
					}
				}
			}
		}
	}
}

// TestStoreBF16Refused: StoreBF16 needs a float32 output, only a
// bfloat16 Linear reads words, and GELULinear refuses Recompute (it is
// for the Linear that makes u).
func TestStoreBF16Refused(t *testing.T) {
	g := G.NewGraph()
	x64 := randNode(g, tensor.Float64, "x64", 1, 1, 4, 6)
	if _, err := GELU(x64, GELUExact, StoreBF16()); err == nil {
		t.Error("GELU(float64, StoreBF16): no error")
	}
	w64 := randNode(g, tensor.Float64, "w64", 1, 2, 6)
	if _, err := LayerNorm(x64, w64, w64, 1e-6, StoreBF16()); err == nil {
		t.Error("LayerNorm(float64, StoreBF16): no error")
	}
	x := randNode(g, tensor.Float32, "x", 1, 1, 4, 6)
	w := randNode(g, tensor.Float32, "w", 1, 2, 5, 6)
	act, err := GELU(x, GELUExact, StoreBF16())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []Precision{"", FP32} {
		if _, err := Linear(act, w, nil, WithPrecision(p)); err == nil {
			t.Errorf("Linear(words, %q): no error", p)
		}
	}
	if _, err := Linear(act, w, nil, WithPrecision(BF16)); err != nil {
		t.Errorf("Linear(words, bf16): %v", err)
	}
	if _, err := GELULinear(x, w, nil, GELUExact, WithPrecision(FP32)); err == nil {
		t.Error("GELULinear(fp32): no error")
	}
	if _, err := GELULinear(x, w, nil, GELUExact, WithPrecision(BF16), Recompute()); err == nil || !strings.Contains(err.Error(), "Recompute") {
		t.Errorf("GELULinear(Recompute): %v, want an error naming Recompute", err)
	}
}

// attnRun builds y = proj(Attention(qkv(LayerNorm(x)))) in bf16 (the
// LayerNorm, qkv and attention outputs kept as bfloat16 words when words)
// with the cost Σ y⊙R, runs it twice, and returns y and the gradients of
// x, qkv's weight and bias, and proj's weight, and the qkv node.
func attnRun(t *testing.T, words, planned bool) ([][]float32, *G.Node) {
	t.Helper()
	const batch, tokens, heads, dim = 2, 37, 3, 24
	m := batch * tokens
	g := G.NewGraph()
	x := randNode(g, tensor.Float32, "x", 1, 1, m, dim)
	lw := randNode(g, tensor.Float32, "lw", 0.3, 2, dim)
	lb := randNode(g, tensor.Float32, "lb", 0.3, 3, dim)
	wq := randNode(g, tensor.Float32, "wq", 0.3, 4, 3*dim, dim)
	bq := randNode(g, tensor.Float32, "bq", 0.3, 5, 3*dim)
	wp := randNode(g, tensor.Float32, "wp", 0.3, 6, dim, dim)
	bf := WithPrecision(BF16)
	opts := []OpOption{bf}
	if words {
		opts = append(opts, StoreBF16())
	}
	norm, err := LayerNorm(x, lw, lb, 1e-6, opts[1:]...)
	if err != nil {
		t.Fatal(err)
	}
	qkv, err := Linear(norm, wq, bq, opts...)
	if err != nil {
		t.Fatal(err)
	}
	o, err := Attention(qkv, batch, tokens, heads, opts...)
	if err != nil {
		t.Fatal(err)
	}
	y, err := Linear(o, wp, nil, bf)
	if err != nil {
		t.Fatal(err)
	}
	r := randNode(g, tensor.Float32, "R", 1, 9, m, dim)
	cost := G.Must(G.Sum(G.Must(G.HadamardProd(y, r))))
	return runTwice(t, g, cost, y, G.Nodes{x, wq, bq, wp, lw}, planned), qkv
}

// TestStoreBF16Attention: an attention branch whose LayerNorm, qkv and
// attention outputs are kept as bfloat16 words gives the bits of the one
// that keeps them in float32, forward and every gradient, with and
// without planned buffers; the qkv really is words.
func TestStoreBF16Attention(t *testing.T) {
	names := []string{"y", "dx", "dwq", "dbq", "dwp", "dlw"}
	for _, planned := range []bool{false, true} {
		want, _ := attnRun(t, false, planned)
		got, qkv := attnRun(t, true, planned)
		if dt := qkv.Value().Dtype(); dt != tensor.Uint16 {
			t.Fatalf("planned=%t: qkv is %v, want bfloat16 words (uint16)", planned, dt)
		}
		for i := range want {
			if !sameBits32(got[i], want[i]) {
				t.Errorf("planned=%t: %s differs when the activations are kept in bfloat16", planned, names[i])
			}
		}
	}
}

// TestLinearWordsInChunks: a Linear whose output is kept as words computes
// it in chunks of rows (linearChunkRows) through a small float32 buffer;
// over several chunks and a short last one, with x as float32 values or as
// words, the words are the float32 output's, rounded. GELULinear rounds
// its input a chunk at a time: it equals a GELU kept as words, then Linear.
func TestLinearWordsInChunks(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1)) // chunks of 256 rows
	const k, n = 24, 40
	m := 2*linearChunkRows(1<<20) + 37
	for _, xWords := range []bool{false, true} {
		g := G.NewGraph()
		x := randNode(g, tensor.Float32, "x", 1, 1, m, k)
		w := randNode(g, tensor.Float32, "w", 0.3, 2, n, k)
		b := randNode(g, tensor.Float32, "b", 0.3, 3, n)
		in := x
		if xWords {
			lw := randNode(g, tensor.Float32, "lw", 0.3, 4, k)
			lb := randNode(g, tensor.Float32, "lb", 0.3, 5, k)
			in = G.Must(LayerNorm(x, lw, lb, 1e-6, StoreBF16()))
		}
		words := G.Must(Linear(in, w, b, WithPrecision(BF16), StoreBF16()))
		floats := G.Must(Linear(in, w, b, WithPrecision(BF16)))
		vm := G.NewTapeMachine(g)
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		got := words.Value().Data().([]uint16)
		want := make([]uint16, m*n)
		kernels.WordsBF16(want, floats.Value().Data().([]float32))
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("x words %t, m %d: element %d (row %d) is %#04x, want %#04x", xWords, m, i, i/n, got[i], want[i])
			}
		}
		vm.Close()
	}
	g := G.NewGraph()
	u := randNode(g, tensor.Float32, "u", 1, 6, m, k)
	w := randNode(g, tensor.Float32, "w", 0.3, 7, n, k)
	b := randNode(g, tensor.Float32, "b", 0.3, 8, n)
	fused := G.Must(GELULinear(u, w, b, GELUExact, WithPrecision(BF16)))
	apart := G.Must(Linear(G.Must(GELU(u, GELUExact, StoreBF16())), w, b, WithPrecision(BF16)))
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	got, want := fused.Value().Data().([]float32), apart.Value().Data().([]float32)
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("GELULinear, m %d: element %d (row %d) is %v, want %v", m, i, i/n, got[i], want[i])
		}
	}
}
