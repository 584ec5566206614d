package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// naiveAttention is an independent reference: per sample and head, softmax of
// scaled dot products, computed element by element in float64.
func naiveAttention(qkv []float64, b, t, h, d int) []float64 {
	hd := d / h
	out := make([]float64, b*t*d)
	at := func(bi, ti, part, hi, j int) float64 { return qkv[(bi*t+ti)*3*d+part*d+hi*hd+j] }
	for bi := 0; bi < b; bi++ {
		for hi := 0; hi < h; hi++ {
			for i := 0; i < t; i++ {
				s := make([]float64, t)
				mx := math.Inf(-1)
				for j := 0; j < t; j++ {
					for c := 0; c < hd; c++ {
						s[j] += at(bi, i, 0, hi, c) * at(bi, j, 1, hi, c)
					}
					s[j] /= math.Sqrt(float64(hd))
					mx = math.Max(mx, s[j])
				}
				var z float64
				for j := range s {
					s[j] = math.Exp(s[j] - mx)
					z += s[j]
				}
				for c := 0; c < hd; c++ {
					var o float64
					for j := 0; j < t; j++ {
						o += s[j] / z * at(bi, j, 2, hi, c)
					}
					out[(bi*t+i)*d+hi*hd+c] = o
				}
			}
		}
	}
	return out
}

func TestAttentionForward(t *testing.T) {
	const b, tok, h, d = 3, 5, 2, 8
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		g := G.NewGraph()
		qkv := randNode(g, dt, "qkv", 1, 4, b*tok, 3*d)
		y, err := Attention(qkv, b, tok, h)
		if err != nil {
			t.Fatal(err)
		}
		runOnce(t, g)
		var in, got []float64
		switch v := qkv.Value().Data().(type) {
		case []float64:
			in, got = v, y.Value().Data().([]float64)
		case []float32:
			for _, x := range v {
				in = append(in, float64(x))
			}
			for _, x := range y.Value().Data().([]float32) {
				got = append(got, float64(x))
			}
		}
		want := naiveAttention(in, b, tok, h, d)
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-5 {
				t.Fatalf("%v: y[%d] = %v, want %v", dt, i, got[i], want[i])
			}
		}
	}
}

func TestAttentionGradCheck(t *testing.T) {
	for _, tc := range []struct{ b, tok, h, d int }{{2, 3, 1, 4}, {2, 5, 2, 8}, {1, 4, 4, 8}} {
		g := G.NewGraph()
		qkv := randNode(g, tensor.Float64, "qkv", 1, 5, tc.b*tc.tok, 3*tc.d)
		y, err := Attention(qkv, tc.b, tc.tok, tc.h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := GradCheck(weightedSum(t, y, 6), G.Nodes{qkv}, GradCheckOptions{}); err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
	}
}

// The float32 forward and backward (SgemmSerial per image and head) match
// the float64 path, including the ViT shape of 50 tokens and a batch that
// does not split evenly over the cores.
func TestAttention32MatchesFloat64(t *testing.T) {
	for _, tc := range []struct{ b, tok, h, d int }{{3, 5, 2, 8}, {1, 7, 3, 12}, {5, 50, 4, 64}, {3, 50, 3, 192}} {
		op := &attentionOp{batch: tc.b, tokens: tc.tok, heads: tc.h, dim: tc.d}
		r := rand.New(rand.NewPCG(uint64(tc.tok), uint64(tc.d)))
		rnd := func(n int) ([]float64, []float32) {
			x64, x32 := make([]float64, n), make([]float32, n)
			for i := range x32 {
				x32[i] = float32(r.NormFloat64())
				x64[i] = float64(x32[i])
			}
			return x64, x32
		}
		nq, ny, np := tc.b*tc.tok*3*tc.d, tc.b*tc.tok*tc.d, tc.b*tc.h*tc.tok*tc.tok
		qkv64, qkv32 := rnd(nq)
		dy64, dy32 := rnd(ny)
		y64, p64, dq64 := make([]float64, ny), make([]float64, np), make([]float64, nq)
		y32, p32, dq32 := make([]float32, ny), make([]float32, np), make([]float32, nq)
		attnForward(op, y64, nil, qkv64, nil, p64)
		attnForward(op, y32, nil, qkv32, nil, p32)
		attnBackward(op, dq64, qkv64, nil, dy64, p64)
		attnBackward(op, dq32, qkv32, nil, dy32, p32)
		for _, c := range []struct {
			name string
			want []float64
			got  []float32
			tol  float64
		}{{"y", y64, y32, 1e-5}, {"probs", p64, p32, 1e-6}, {"dqkv", dq64, dq32, 1e-4}} {
			for i, w := range c.want {
				if d := math.Abs(float64(c.got[i]) - w); !(d <= c.tol*(1+math.Abs(w))) {
					t.Fatalf("%+v: %s[%d] = %v, want %v", tc, c.name, i, c.got[i], w)
				}
			}
		}
	}
}

// attentionGraph builds Attention on random qkv with the gradient of a
// weighted sum of its output; recompute false makes the op keep its
// probabilities as an inference graph does.
func attentionGraph(t *testing.T, dt tensor.Dtype, b, tok, h, d int, recompute bool) (*attentionOp, *G.Node, *G.Node) {
	t.Helper()
	g := G.NewGraph()
	qkv := randNode(g, dt, "qkv", 1, 7, b*tok, 3*d)
	y, err := Attention(qkv, b, tok, h)
	if err != nil {
		t.Fatal(err)
	}
	grads, err := G.Grad(weightedSum(t, y, 8), qkv)
	if err != nil {
		t.Fatal(err)
	}
	op := y.Op().(*attentionOp)
	if !op.recompute {
		t.Fatal("building the gradient did not switch the attention to recomputing")
	}
	op.recompute = recompute
	runOnce(t, g)
	return op, y, grads[0]
}

// TestAttentionRecomputeIsExact: a graph with a backward pass keeps no
// attention probabilities, and recomputing them in the backward pass gives
// the output and the qkv gradient of the kept-probabilities path bit for
// bit, in float32 and float64, at 1, 2 and 8 cores (the (image, head) pairs
// split differently), at ViT-S/16@224's 197 tokens among others.
func TestAttentionRecomputeIsExact(t *testing.T) {
	for _, tc := range []struct{ b, tok, h, d int }{{3, 5, 2, 8}, {5, 50, 4, 64}, {2, 197, 6, 384}} {
		for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
			var ref [][]float64
			for _, procs := range []int{1, 2, 8} {
				prev := runtime.GOMAXPROCS(procs)
				op, y, dq := attentionGraph(t, dt, tc.b, tc.tok, tc.h, tc.d, true)
				if len(op.probs32)+len(op.probs64) != 0 {
					t.Errorf("%+v %v: the training graph kept %d probabilities", tc, dt, len(op.probs32)+len(op.probs64))
				}
				got := [][]float64{valueF64s(t, y.Value()), valueF64s(t, dq.Value())}
				kop, ky, kdq := attentionGraph(t, dt, tc.b, tc.tok, tc.h, tc.d, false)
				if n := len(kop.probs32) + len(kop.probs64); n != tc.b*tc.h*tc.tok*tc.tok {
					t.Errorf("%+v %v: the kept path holds %d probabilities", tc, dt, n)
				}
				runtime.GOMAXPROCS(prev)
				for i, want := range [][]float64{valueF64s(t, ky.Value()), valueF64s(t, kdq.Value())} {
					if !sameBits(got[i], want) {
						t.Errorf("%+v %v, %d cores: %s differs between recomputed and kept probabilities", tc, dt, procs, []string{"y", "dqkv"}[i])
					}
				}
				if ref == nil {
					ref = got
					continue
				}
				for i := range ref {
					if !sameBits(ref[i], got[i]) {
						t.Errorf("%+v %v: %s differs between 1 and %d cores", tc, dt, []string{"y", "dqkv"}[i], procs)
					}
				}
			}
		}
	}
}

// TestAttentionProbsOfTrainingGraph: reading maps from a graph that keeps
// none is an error, not a silent empty result.
func TestAttentionProbsOfTrainingGraph(t *testing.T) {
	_, y, _ := attentionGraph(t, tensor.Float32, 2, 5, 2, 8, true)
	if _, _, _, _, err := AttentionProbs(y); err == nil {
		t.Error("AttentionProbs on a training graph gave no error")
	}
}

func TestAttentionErrors(t *testing.T) {
	g := G.NewGraph()
	qkv := randNode(g, tensor.Float32, "qkv", 1, 5, 10, 24)
	if _, err := Attention(qkv, 2, 5, 3); err == nil {
		t.Error("dim 8 with 3 heads: want an error")
	}
	if _, err := Attention(qkv, 3, 5, 2); err == nil {
		t.Error("10 rows as 3×5 tokens: want an error")
	}
}

func TestTokenOpsGradCheck(t *testing.T) {
	const b, c, hw, p, d = 2, 2, 4, 2, 3
	n := (hw / p) * (hw / p)
	cases := []struct {
		name  string
		build func(g *G.ExprGraph) (*G.Node, G.Nodes, error)
	}{
		{"patchify", func(g *G.ExprGraph) (*G.Node, G.Nodes, error) {
			img := randNode(g, tensor.Float64, "img", 1, 1, b, c, hw, hw)
			y, err := Patchify(img, p)
			return y, G.Nodes{img}, err
		}},
		{"channels-last", func(g *G.ExprGraph) (*G.Node, G.Nodes, error) {
			x := randNode(g, tensor.Float64, "x", 1, 1, b, d, 2, 3)
			y, err := ChannelsLast(x)
			return y, G.Nodes{x}, err
		}},
		{"tokens", func(g *G.ExprGraph) (*G.Node, G.Nodes, error) {
			ps := randNode(g, tensor.Float64, "patches", 1, 1, b*n, d)
			cls := randNode(g, tensor.Float64, "cls", 1, 2, 1, 1, d)
			pos := randNode(g, tensor.Float64, "pos", 1, 3, 1, n+1, d)
			y, err := Tokens(ps, cls, pos, b)
			return y, G.Nodes{ps, cls, pos}, err
		}},
		{"tokens-distilled", func(g *G.ExprGraph) (*G.Node, G.Nodes, error) {
			ps := randNode(g, tensor.Float64, "patches", 1, 1, b*n, d)
			cls := randNode(g, tensor.Float64, "cls", 1, 2, 1, 1, d)
			dist := randNode(g, tensor.Float64, "dist", 1, 4, 1, 1, d)
			pos := randNode(g, tensor.Float64, "pos", 1, 3, 1, n+2, d)
			y, err := TokensPrefix(ps, pos, b, cls, dist)
			return y, G.Nodes{ps, cls, dist, pos}, err
		}},
		{"readout-rows", func(g *G.ExprGraph) (*G.Node, G.Nodes, error) {
			x := randNode(g, tensor.Float64, "x", 1, 1, b*(n+2), d)
			y, err := ReadoutRows(x, b, 1, 2)
			return y, G.Nodes{x}, err
		}},
		{"readout-cls", func(g *G.ExprGraph) (*G.Node, G.Nodes, error) {
			x := randNode(g, tensor.Float64, "x", 1, 1, b*(n+1), d)
			y, err := Readout(x, b, false)
			return y, G.Nodes{x}, err
		}},
		{"readout-mean", func(g *G.ExprGraph) (*G.Node, G.Nodes, error) {
			x := randNode(g, tensor.Float64, "x", 1, 1, b*(n+1), d)
			y, err := Readout(x, b, true)
			return y, G.Nodes{x}, err
		}},
		{"add", func(g *G.ExprGraph) (*G.Node, G.Nodes, error) {
			x := randNode(g, tensor.Float64, "x", 1, 1, 3, d)
			z := randNode(g, tensor.Float64, "z", 1, 2, 3, d)
			y, err := Add(x, z)
			return y, G.Nodes{x, z}, err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := G.NewGraph()
			y, wrt, err := tc.build(g)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := GradCheck(weightedSum(t, y, 3), wrt, GradCheckOptions{}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestPatchifyLayout(t *testing.T) {
	// One 1×2×4×4 image whose pixels are their own flat index.
	g := G.NewGraph()
	img := tensor.New(tensor.WithShape(1, 2, 4, 4), tensor.WithBacking(tensor.Range(tensor.Float64, 0, 32)))
	x := G.NewTensor(g, tensor.Float64, 4, G.WithValue(img), G.WithName("img"))
	y, err := Patchify(x, 2)
	if err != nil {
		t.Fatal(err)
	}
	runOnce(t, g)
	got := y.Value().Data().([]float64)
	// Patch (0,1): channel 0 rows 0-1 cols 2-3, then channel 1.
	want := []float64{2, 3, 6, 7, 18, 19, 22, 23}
	for i, w := range want {
		if got[8+i] != w {
			t.Fatalf("patch 1 = %v, want %v", got[8:16], want)
		}
	}
	if _, err := Patchify(x, 3); err == nil {
		t.Fatal("4×4 image with patch 3: want an error")
	}
}

// BenchmarkAttention32 times the float32 attention core (the products and
// the softmax, forward and backward) at batch 128, 50 tokens, for the TINY
// (d 64, 4 heads) and SMALL (d 192, 3 heads) shapes, as training runs it:
// no probabilities kept, the backward pass recomputing them.
func BenchmarkAttention32(b *testing.B) {
	const batch, tok = 128, 50
	for _, s := range []struct{ d, h int }{{64, 4}, {192, 3}} {
		op := &attentionOp{batch: batch, tokens: tok, heads: s.h, dim: s.d}
		r := rand.New(rand.NewPCG(1, 2))
		fill := func(n int) []float32 {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
			return x
		}
		qkv, dy := fill(batch*tok*3*s.d), fill(batch*tok*s.d)
		y, dqkv := make([]float32, batch*tok*s.d), make([]float32, batch*tok*3*s.d)
		b.Run(fmt.Sprintf("fwd_d%d_h%d", s.d, s.h), func(b *testing.B) {
			for b.Loop() {
				attnForward(op, y, nil, qkv, nil, nil)
			}
		})
		b.Run(fmt.Sprintf("bwd_recompute_d%d_h%d", s.d, s.h), func(b *testing.B) {
			for b.Loop() {
				attnBackward(op, dqkv, qkv, nil, dy, nil)
			}
		})
	}
}
