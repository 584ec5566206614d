package graph

import (
	"math"
	"testing"

	"github.com/vitgo/vit/graph/kernels"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// maxRelDiff is max |a−b| / max(1, max |b|).
func maxRelDiff(a, b []float64) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	var d, s float64
	for i := range a {
		d = math.Max(d, math.Abs(a[i]-b[i]))
		s = math.Max(s, math.Abs(b[i]))
	}
	return d / math.Max(1, s)
}

// TestLinearPackedMatchesLinear: LinearPacked on PackWeight(w) is Linear on
// w (float32: bit for bit), with and without bias, for a matrix weight and
// a conv-shaped one, on shapes that split over the cores by rows and by
// columns.
func TestLinearPackedMatchesLinear(t *testing.T) {
	cases := []struct {
		m     int
		w     []int
		bias  bool
		float tensor.Dtype
	}{
		{197, []int{192, 192}, true, tensor.Float32},     // rows split
		{197, []int{576, 192}, true, tensor.Float32},     // columns split
		{8, []int{1000, 192}, true, tensor.Float32},      // head: serial, edge panel
		{196, []int{16, 3, 4, 4}, false, tensor.Float32}, // conv-shaped weight
		{13, []int{7, 5}, true, tensor.Float64},
		{13, []int{7, 5}, false, tensor.Float64},
	}
	for _, c := range cases {
		k := tensor.Shape(c.w[1:]).TotalSize()
		g := G.NewGraph()
		x := randNode(g, c.float, "x", 1, 1, c.m, k)
		w := randNode(g, c.float, "w", 1, 2, c.w...)
		var b *G.Node
		if c.bias {
			b = randNode(g, c.float, "b", 1, 3, c.w[0])
		}
		pw, err := PackWeight(w.Value().(*tensor.Dense))
		if err != nil {
			t.Fatal(err)
		}
		want, err := Linear(x, w, b)
		if err != nil {
			t.Fatal(err)
		}
		got, err := LinearPacked(x, pw, b)
		if err != nil {
			t.Fatal(err)
		}
		runOnce(t, g)
		tol := 1e-12
		if c.float == tensor.Float32 {
			tol = 0
		}
		if d := maxRelDiff(valueF64s(t, got.Value()), valueF64s(t, want.Value())); d > tol {
			t.Errorf("m %d w %v bias %v %v: LinearPacked differs from Linear by %g", c.m, c.w, c.bias, c.float, d)
		}
	}
	g := G.NewGraph()
	pw, err := PackWeight(randNode(g, tensor.Float32, "w", 1, 1, 6, 3).Value().(*tensor.Dense))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LinearPacked(randNode(g, tensor.Float32, "x", 1, 1, 4, 5), pw, nil); err == nil {
		t.Error("LinearPacked accepted x (4,5) with a weight of 3 inputs")
	}
	if _, err := LinearPacked(randNode(g, tensor.Float64, "x", 1, 1, 4, 3), pw, nil); err == nil {
		t.Error("LinearPacked accepted float64 x with a float32 weight")
	}
	if _, err := PackWeight(tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(5))); err == nil {
		t.Error("PackWeight accepted a vector")
	}
}

// TestLinearPackedFused: LinearPackedGELU is GELU after Linear and
// LinearPackedAdd is Add(r, Linear), element for element (float32: bit for
// bit), on shapes split by rows and by columns.
func TestLinearPackedFused(t *testing.T) {
	for _, c := range []struct {
		m, n, k int
		float   tensor.Dtype
	}{{197, 768, 192, tensor.Float32}, {1576, 192, 768, tensor.Float32}, {197, 192, 192, tensor.Float32}, {5, 7, 3, tensor.Float32}, {13, 9, 5, tensor.Float64}} {
		for _, approx := range []GELUApprox{GELUExact, GELUTanh} {
			g := G.NewGraph()
			x := randNode(g, c.float, "x", 1, 1, c.m, c.k)
			w := randNode(g, c.float, "w", 0.2, 2, c.n, c.k)
			b := randNode(g, c.float, "b", 1, 3, c.n)
			r := randNode(g, c.float, "r", 1, 4, c.m, c.n)
			pw, err := PackWeight(w.Value().(*tensor.Dense))
			if err != nil {
				t.Fatal(err)
			}
			lin := G.Must(Linear(x, w, b))
			wantGELU := G.Must(GELU(lin, approx))
			wantAdd := G.Must(Add(r, lin))
			gotGELU := G.Must(LinearPackedGELU(x, pw, b, approx))
			gotAdd := G.Must(LinearPackedAdd(x, pw, b, r))
			runOnce(t, g)
			tol := 1e-12
			if c.float == tensor.Float32 {
				tol = 0
			}
			for _, p := range [][2]*G.Node{{gotGELU, wantGELU}, {gotAdd, wantAdd}} {
				if d := maxRelDiff(valueF64s(t, p[0].Value()), valueF64s(t, p[1].Value())); d > tol {
					t.Errorf("%v %v %v: %v differs by %g", c, approx, c.float, p[0].Op(), d)
				}
			}
		}
	}
	g := G.NewGraph()
	pw, _ := PackWeight(randNode(g, tensor.Float32, "w", 1, 1, 6, 3).Value().(*tensor.Dense))
	x := randNode(g, tensor.Float32, "x", 1, 1, 4, 3)
	if _, err := LinearPackedAdd(x, pw, nil, randNode(g, tensor.Float32, "r", 1, 1, 4, 5)); err == nil {
		t.Error("LinearPackedAdd accepted a (4,5) residual for a (4,6) result")
	}
	if _, err := LinearPackedGELU(x, pw, nil, GELUApprox(7)); err == nil {
		t.Error("LinearPackedGELU accepted an unknown approximation")
	}
}

// TestAttentionEvalMatchesAttention: the eval attention, whatever the row
// blocks, gives the output of Attention (ViT-Ti's shapes: 197 tokens, 3
// heads of 64), within float32 rounding.
func TestAttentionEvalMatchesAttention(t *testing.T) {
	const tok, heads, d = 197, 3, 192
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		for _, batch := range []int{1, 2} {
			g := G.NewGraph()
			qkv := randNode(g, dt, "qkv", 1, 5, batch*tok, 3*d)
			want, err := Attention(qkv, batch, tok, heads)
			if err != nil {
				t.Fatal(err)
			}
			got, err := AttentionEval(qkv, batch, tok, heads)
			if err != nil {
				t.Fatal(err)
			}
			runOnce(t, g)
			ref := valueF64s(t, want.Value())
			if e := maxRelDiff(valueF64s(t, got.Value()), ref); e > 1e-6 {
				t.Errorf("%v batch %d: AttentionEval differs by %g", dt, batch, e)
			}
			// Every split into row blocks, including blocks of one row and
			// more blocks than rows divide evenly.
			op := got.Op().(*attentionEvalOp)
			for _, blocks := range []int{1, 2, 5, 7, tok} {
				if dt != tensor.Float32 {
					break
				}
				y := make([]float32, batch*tok*d)
				op.forward32(y, qkv.Value().Data().([]float32), blocks)
				y2 := make([]float32, batch*tok*d)
				attnEvalForward(op, y2, qkv.Value().Data().([]float32), blocks)
				// Bit for bit where the products are (kernels.SplitInvariant);
				// OpenBLAS sums a packed and an unpacked operand in orders of
				// its own.
				for i := range y {
					if kernels.SplitInvariant && y[i] != y2[i] || math.Abs(float64(y[i]-y2[i])) > 1e-5*(1+math.Abs(float64(y2[i]))) {
						t.Fatalf("batch %d, %d row blocks: packed K and V give y[%d] = %v, unpacked %v", batch, blocks, i, y[i], y2[i])
					}
				}
				out := make([]float64, len(y))
				for i, v := range y {
					out[i] = float64(v)
				}
				if e := maxRelDiff(out, ref); e > 1e-6 {
					t.Errorf("batch %d, %d row blocks: differs by %g", batch, blocks, e)
				}
			}
			if _, _, _, _, err := AttentionProbs(got); err == nil {
				t.Error("AttentionProbs read maps from an AttentionEval node")
			}
		}
	}
}

// TestAttentionEvalFirst: the first q query rows alone are the first q rows
// of the full eval attention, bit for bit (splitEqual: within 1e-5 under
// -tags openblas), for q = 1 (the class token) and a q that cuts row
// blocks unevenly.
func TestAttentionEvalFirst(t *testing.T) {
	const batch, tok, heads, d = 3, 197, 3, 192
	g := G.NewGraph()
	qkv := randNode(g, tensor.Float32, "qkv", 1, 6, batch*tok, 3*d)
	full := G.Must(AttentionEval(qkv, batch, tok, heads))
	var firsts []*G.Node
	qs := []int{1, 50}
	for _, q := range qs {
		firsts = append(firsts, G.Must(AttentionEvalFirst(qkv, batch, tok, heads, q)))
	}
	runOnce(t, g)
	all := full.Value().Data().([]float32)
	for i, q := range qs {
		got := firsts[i].Value().Data().([]float32)
		if len(got) != batch*q*d {
			t.Fatalf("q %d: %d values, want %d", q, len(got), batch*q*d)
		}
		for b := 0; b < batch; b++ {
			for j := 0; j < q*d; j++ {
				g, w := float64(got[b*q*d+j]), float64(all[b*tok*d+j])
				if !splitEqual([]float64{g}, []float64{w}) {
					t.Fatalf("q %d, image %d, element %d: %v, full attention %v", q, b, j, got[b*q*d+j], all[b*tok*d+j])
				}
			}
		}
	}
	if _, err := AttentionEvalFirst(qkv, batch, tok, heads, 0); err == nil {
		t.Error("AttentionEvalFirst accepted 0 query rows")
	}
}

func TestAttnRowBlocks(t *testing.T) {
	for _, c := range []struct{ pairs, tokens, workers, want int }{
		{3, 197, 2, 6},  // ViT-Ti batch 1: 18 units over 2 cores
		{6, 197, 2, 3},  // ViT-S batch 1
		{24, 197, 2, 1}, // ViT-Ti batch 8: pairs enough
		{3, 197, 1, 1},  // one core: no split
		{3, 50, 2, 2},   // short sequences: blocks of ≥ attnMinRows rows
		{3, 10, 2, 1},
	} {
		if got := attnRowBlocks(c.pairs, c.tokens, c.workers); got != c.want {
			t.Errorf("attnRowBlocks(%d, %d, %d) = %d, want %d", c.pairs, c.tokens, c.workers, got, c.want)
		}
	}
}

// TestGatherSplit: gather split over the cores (large enough to split)
// puts every element where the serial loop does.
func TestGatherSplit(t *testing.T) {
	const n = 100003
	src := make([]float32, n)
	idx := make([]int32, n)
	for i := range src {
		src[i] = float32(i)
		idx[i] = int32((i * 7919) % n)
	}
	dst := make([]float32, n)
	gather(dst, src, idx)
	for i, j := range idx {
		if dst[i] != src[j] {
			t.Fatalf("dst[%d] = %v, want src[%d] = %v", i, dst[i], j, src[j])
		}
	}
}

// TestPatchifyRuns: Patchify is kept as copies of runs of a patch row (no
// element-wise table), in both directions (the gradient scatters back the
// same way), and gives each patch element where a stride-P convolution
// reads it; a permutation without long runs keeps the element-wise gather.
func TestPatchifyRuns(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		g := G.NewGraph()
		const b, c, h, w, p = 2, 3, 64, 48, 16
		img := randNode(g, dt, "img", 1, 7, b, c, h, w)
		y, err := Patchify(img, p)
		if err != nil {
			t.Fatal(err)
		}
		op := y.Op().(*permuteOp)
		if op.perm != nil || op.inv != nil || len(op.runs) != b*c*h*w/p {
			t.Fatalf("%v: %d runs and a table of %d elements, want %d runs and no table", dt, len(op.runs), len(op.perm), b*c*h*w/p)
		}
		runOnce(t, g)
		src, got := valueF64s(t, img.Value()), valueF64s(t, y.Value())
		i := 0
		for bi := range b {
			for py := range h / p {
				for px := range w / p {
					for ci := range c {
						for yy := range p {
							for xx := range p {
								j := ((bi*c+ci)*h+py*p+yy)*w + px*p + xx
								if got[i] != src[j] {
									t.Fatalf("%v: y[%d] = %v, want x[%d] = %v", dt, i, got[i], j, src[j])
								}
								i++
							}
						}
					}
				}
			}
		}
		back, err := op.SymDiff(G.Nodes{img}, y, y)
		if err != nil {
			t.Fatal(err)
		}
		bop := back[0].Op().(*permuteOp)
		if bop.perm != nil || len(bop.runs) != len(op.runs) {
			t.Errorf("%v: the gradient's scatter has %d runs and a table of %d, want %d runs", dt, len(bop.runs), len(bop.perm), len(op.runs))
		}
		v, err := bop.Do(y.Value()) // the scatter of y is the image again
		if err != nil {
			t.Fatal(err)
		}
		for i, x := range valueF64s(t, v) {
			if x != src[i] {
				t.Fatalf("%v: scatter back gives %v at %d, image %v", dt, x, i, src[i])
			}
		}
	}
	g := G.NewGraph()
	cl, err := ChannelsLast(randNode(g, tensor.Float32, "x", 1, 1, 2, 8, 4, 4))
	if err != nil {
		t.Fatal(err)
	}
	if r := cl.Op().(*permuteOp).runs; r != nil {
		t.Errorf("ChannelsLast got %d runs; its permutation has none to speak of", len(r))
	}
}
