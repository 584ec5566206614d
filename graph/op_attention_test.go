package graph

import (
	"math"
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
		m := G.NewTapeMachine(g)
		if err := m.RunAll(); err != nil {
			t.Fatal(err)
		}
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
		m.Close()
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
	m := G.NewTapeMachine(g)
	defer m.Close()
	if err := m.RunAll(); err != nil {
		t.Fatal(err)
	}
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
