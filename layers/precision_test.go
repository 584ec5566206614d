package layers

import (
	"bytes"
	"errors"
	"hash"
	"math"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/graph"
)

// hashText is a hash.Hash that keeps what an op writes into it.
type hashText struct{ bytes.Buffer }

func (*hashText) Sum(b []byte) []byte { return b }
func (*hashText) Size() int           { return 0 }
func (*hashText) BlockSize() int      { return 1 }

var _ hash.Hash = (*hashText)(nil)

// productOps returns, for each op of g that computes a matrix product
// (Linear and its backward products, the packed Linears, attention), what
// the op writes to its hash, which names a bfloat16 op's precision.
func productOps(g *G.ExprGraph) []string {
	var out []string
	for _, n := range g.AllNodes() {
		op := n.Op()
		if op == nil {
			continue
		}
		name := op.String()
		if !strings.HasPrefix(name, "Linear") && !strings.HasPrefix(name, "Attention") || name == "AttentionGrad" {
			continue // AttentionGrad runs in its forward op's precision
		}
		var h hashText
		op.WriteHash(&h)
		out = append(out, h.String())
	}
	return out
}

// bf16Model is a float32 model of a small config, with large weights so
// that bfloat16 rounding shows in the logits.
func bf16Model(t *testing.T) (*VisionTransformer, Config) {
	t.Helper()
	c := tinyConfig()
	c.ImgSize, c.PatchSize, c.EmbedDim, c.NumHeads, c.Depth = Size2{16, 16}, 4, 32, 2, 2
	m, err := New(c, tensor.Float32, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range m.Params {
		InitTruncNormal(p.Value, 0.3, randFor(p.Name))
	}
	return m, c
}

// TestBuildBF16: BuildOptions.Precision reaches every product of the
// training graph (forward and backward), the evaluation graphs (with and
// without maps) and the Frozen one; the bf16 graphs agree with each other
// bit for bit (each element of a bfloat16 product is defined on its own)
// and differ from the fp32 graph.
func TestBuildBF16(t *testing.T) {
	m, _ := bf16Model(t)
	logits := map[string][]float32{}
	for name, opts := range map[string]BuildOptions{
		"fp32":        {},
		"bf16":        {Precision: graph.BF16},
		"bf16 nomaps": {Precision: graph.BF16, NoMaps: true},
		"bf16 frozen": {Precision: graph.BF16, Frozen: true},
		"bf16 train":  {Precision: graph.BF16, Training: true},
	} {
		g, err := m.Build(4, opts)
		if err != nil {
			t.Fatal(err)
		}
		if opts.Training {
			if _, err := G.Grad(weightedSum32(t, g.Logits), g.Params...); err != nil {
				t.Fatal(err)
			}
		}
		ops := productOps(g.G)
		if len(ops) == 0 {
			t.Fatalf("%s: no product ops", name)
		}
		for _, h := range ops {
			if bf := strings.Contains(h, "bf16"); bf != opts.Precision.IsBF16() {
				t.Errorf("%s: op %s has bf16 %t", name, h, bf)
			}
		}
		fillInput32(g)
		runGraph(t, g.G)
		logits[name] = append([]float32(nil), g.Logits.Value().Data().([]float32)...)
	}
	same := func(a, b []float32) bool {
		for i := range a {
			if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
				return false
			}
		}
		return len(a) == len(b)
	}
	for _, name := range []string{"bf16 nomaps", "bf16 frozen", "bf16 train"} {
		if !same(logits[name], logits["bf16"]) {
			t.Errorf("%s logits %v differ from the bf16 evaluation graph's %v", name, logits[name], logits["bf16"])
		}
	}
	if same(logits["bf16"], logits["fp32"]) {
		t.Error("bf16 logits equal fp32 ones")
	}
}

func weightedSum32(t *testing.T, y *G.Node) *G.Node {
	t.Helper()
	r := tensor.New(tensor.Of(y.Dtype()), tensor.WithShape(y.Shape()...))
	d := r.Data().([]float32)
	for i := range d {
		d[i] = float32(math.Cos(float64(i) * 1.3))
	}
	rn := G.NewTensor(y.Graph(), y.Dtype(), y.Dims(), G.WithValue(r), G.WithName("R"))
	return G.Must(G.Sum(G.Must(G.HadamardProd(y, rn))))
}

// TestBuildBF16Refusals: an unknown precision, bf16 with the conv patch
// embedding and bf16 on a float64 model are build errors.
func TestBuildBF16Refusals(t *testing.T) {
	m, c := bf16Model(t)
	if _, err := m.Build(2, BuildOptions{Precision: "fp16"}); err == nil || !strings.Contains(err.Error(), "fp16") {
		t.Errorf("precision fp16: err %v", err)
	}
	c.PatchEmbed = PatchConv
	mc, err := New(c, tensor.Float32, 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mc.Build(2, BuildOptions{Precision: graph.BF16}); err == nil {
		t.Error("bf16 with the conv patch embedding built")
	}
	m64 := randomModel(t, tinyConfig(), 1)
	_, err = m64.Build(2, BuildOptions{Precision: graph.BF16})
	var pe *graph.PrecisionError
	if !errors.As(err, &pe) {
		t.Errorf("bf16 on a float64 model: err %v, want a *graph.PrecisionError", err)
	}
}

// TestRecompute: a bf16 training graph with RecomputeMLP or
// RecomputeBlock gives the same logits and gradients, bit for bit, as one
// without; it has one recompute op per block and recomputed node (mlp:
// fc1; block: norm1, qkv, attn.proj, its residual sum, norm2, fc1), and
// its planned arena is smaller by at least what it stops keeping, one
// block's worth excepted: with mlp the fc1 outputs (a (B·T, hidden)
// float32 matrix per block), with block also the words of norm1, qkv and
// norm2 and norm2's float32 input (14·D bytes per row and block).
func TestRecompute(t *testing.T) {
	m, c := bf16Model(t)
	const batch = 4
	step := func(rc Recompute) recomputeRun {
		return recomputeStep(t, m, batch, BuildOptions{Precision: graph.BF16, Training: true, Seed: 5, Recompute: rc})
	}
	rows := float64(batch * c.NumTokens())
	u := rows * float64(c.EmbedDim) * c.MLPRatio * 4 / (1 << 20) // fc1's float32 output
	blk := rows * float64(c.EmbedDim) * 14 / (1 << 20)           // norm1's, qkv's and norm2's words, norm2's float32 input
	keep := step(RecomputeNone)
	if keep.recompOp != 0 {
		t.Errorf("RecomputeNone: %d recompute ops, want 0", keep.recompOp)
	}
	for _, tc := range []struct {
		rc    Recompute
		nodes int     // recomputed per block
		saves float64 // MiB per block, all blocks but one
	}{
		{RecomputeMLP, 1, u},
		{RecomputeBlock, 6, u + blk},
	} {
		again := step(tc.rc)
		bitsEqual := func(what string, a, b []float32) {
			t.Helper()
			for i := range a {
				if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
					t.Fatalf("%s[%d]: %v with %s, %v without", what, i, b[i], tc.rc, a[i])
				}
			}
		}
		bitsEqual("logits", keep.logits, again.logits)
		for i := range keep.grads {
			bitsEqual(m.Params[i].Name+"'s gradient", keep.grads[i], again.grads[i])
		}
		if again.recompOp != tc.nodes*c.Depth {
			t.Errorf("%s: %d recompute ops, want %d (%d per block)", tc.rc, again.recompOp, tc.nodes*c.Depth, tc.nodes)
		}
		if saved := keep.arena - again.arena; saved < float64(c.Depth-1)*tc.saves {
			t.Errorf("%s: arena %.4f MiB, %.4f without: saves %.4f MiB, want ≥ %d blocks of %.4f MiB", tc.rc, again.arena, keep.arena, saved, c.Depth-1, tc.saves)
		}
	}
}

// recomputeRun is what recomputeStep read from one run of a training graph.
type recomputeRun struct {
	logits   []float32
	grads    [][]float32
	arena    float64
	recompOp int // ops named Recompute(…)
}

// recomputeStep builds m's graph with opts, takes the gradients of a
// weighted sum of its logits (and of a distilled model's head_dist ones),
// plans it, runs it once on fillInput32's input and returns what it gave.
func recomputeStep(t *testing.T, m *VisionTransformer, batch int, opts BuildOptions) recomputeRun {
	t.Helper()
	g, err := m.Build(batch, opts)
	if err != nil {
		t.Fatal(err)
	}
	loss := weightedSum32(t, g.Logits)
	if g.DistLogits != nil {
		loss = G.Must(G.Add(loss, weightedSum32(t, g.DistLogits)))
	}
	grads, err := G.Grad(loss, g.Params...)
	if err != nil {
		t.Fatal(err)
	}
	st, err := graph.PlanBuffers(g.G, graph.NewArena(), append(G.Nodes{g.Logits}, grads...)...)
	if err != nil {
		t.Fatal(err)
	}
	fillInput32(g)
	runGraph(t, g.G)
	r := recomputeRun{logits: append([]float32(nil), g.Logits.Value().Data().([]float32)...), arena: st.ArenaMiB}
	for _, gr := range grads {
		r.grads = append(r.grads, append([]float32(nil), gr.Value().Data().([]float32)...))
	}
	for _, n := range g.G.AllNodes() {
		if n.Op() != nil && strings.HasPrefix(n.Op().String(), "Recompute") {
			r.recompOp++
		}
	}
	return r
}

// TestRecomputeVariants: RecomputeBlock keeps every bit in a distilled
// model's training graph (DeiT: two prefix tokens, two heads) and with
// drop path (whose output the sum's recompute reads, kept).
func TestRecomputeVariants(t *testing.T) {
	_, base := bf16Model(t)
	for name, edit := range map[string]func(*Config){
		"distilled": func(c *Config) { c.Distilled = true },
		"drop path": func(c *Config) { c.DropPathRate = 0.2 },
	} {
		c := base
		edit(&c)
		m, err := New(c, tensor.Float32, 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range m.Params {
			InitTruncNormal(p.Value, 0.3, randFor(p.Name))
		}
		opts := BuildOptions{Precision: graph.BF16, Training: true, Seed: 5, DistilledTraining: c.Distilled}
		keep := recomputeStep(t, m, 4, opts)
		opts.Recompute = RecomputeBlock
		again := recomputeStep(t, m, 4, opts)
		if again.recompOp == 0 {
			t.Errorf("%s: no recompute op", name)
		}
		for i := range keep.logits {
			if math.Float32bits(keep.logits[i]) != math.Float32bits(again.logits[i]) {
				t.Fatalf("%s: logits[%d] %v with RecomputeBlock, %v without", name, i, again.logits[i], keep.logits[i])
			}
		}
		for i := range keep.grads {
			for j := range keep.grads[i] {
				if math.Float32bits(keep.grads[i][j]) != math.Float32bits(again.grads[i][j]) {
					t.Fatalf("%s: %s's gradient [%d] %v with RecomputeBlock, %v without", name, m.Params[i].Name, j, again.grads[i][j], keep.grads[i][j])
				}
			}
		}
	}
}

// TestRecomputeRefusals: RecomputeMLP or RecomputeBlock outside a bf16
// training graph without dropout, and an unknown choice, are build errors
// naming it.
func TestRecomputeRefusals(t *testing.T) {
	m, c := bf16Model(t)
	for name, opts := range map[string]BuildOptions{
		"unknown":    {Precision: graph.BF16, Training: true, Recompute: "everything"},
		"eval":       {Precision: graph.BF16, Recompute: RecomputeMLP},
		"fp32":       {Training: true, Recompute: RecomputeMLP},
		"eval block": {Precision: graph.BF16, Recompute: RecomputeBlock},
		"fp32 block": {Training: true, Recompute: RecomputeBlock},
	} {
		if _, err := m.Build(2, opts); err == nil || !strings.Contains(err.Error(), "recompute") {
			t.Errorf("%s: err %v, want a recompute error", name, err)
		}
	}
	c.Dropout = 0.1
	md, err := New(c, tensor.Float32, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, rc := range []Recompute{RecomputeMLP, RecomputeBlock} {
		if _, err := md.Build(2, BuildOptions{Precision: graph.BF16, Training: true, Recompute: rc}); err == nil || !strings.Contains(err.Error(), "model.dropout") {
			t.Errorf("%s with dropout 0.1: err %v, want one naming model.dropout", rc, err)
		}
	}
}
