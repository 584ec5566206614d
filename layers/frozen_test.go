package layers

import (
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// opCounts counts g's nodes by op name.
func opCounts(g *G.ExprGraph) map[string]int {
	n := map[string]int{}
	for _, nd := range g.AllNodes() {
		if op := nd.Op(); op != nil {
			n[op.String()]++
		}
	}
	return n
}

// TestFrozenMatchesEval: a Frozen graph computes the logits and features of
// the ordinary evaluation graph (float64: to rounding; mean and CLS
// readouts, both patch embeddings), through LinearPacked and AttentionEval.
func TestFrozenMatchesEval(t *testing.T) {
	for _, form := range []PatchEmbedForm{PatchLinear, PatchConv} {
		for _, readout := range []Readout{ReadoutCLS, ReadoutMean} {
			c := tinyConfig()
			c.ImgSize, c.PatchSize, c.InChans, c.Depth = Size2{8, 8}, 2, 3, 2 // 17 tokens
			c.PatchEmbed, c.Readout = form, readout
			plain, frozen := plainAndFrozen(t, c)
			if d := maxDiff(frozen.Logits.Value().Data().([]float64), plain.Logits.Value().Data().([]float64)); d > 1e-12 {
				t.Errorf("%s %s: frozen logits differ from eval by %g", form, readout, d)
			}
			// Features: every token row, or with a class-token readout the
			// class-token rows only (the last block computes no others).
			pf, ff := plain.Features.Value().Data().([]float64), frozen.Features.Value().Data().([]float64)
			if readout == ReadoutCLS {
				tok, d := c.NumPatches()+1, c.EmbedDim
				var cls []float64
				for b := 0; b < batch; b++ {
					cls = append(cls, pf[b*tok*d:b*tok*d+d]...)
				}
				pf = cls
			}
			if d := maxDiff(ff, pf); d > 1e-12 {
				t.Errorf("%s %s: frozen features differ from eval by %g", form, readout, d)
			}
			ops := opCounts(frozen.G)
			want := map[string]int{
				"LinearPacked":     c.Depth + 2, // qkv per block; patch embed; head
				"LinearPackedAdd":  2 * c.Depth, // proj and fc2 with their residuals
				"LinearPackedGELU": c.Depth,     // fc1
				"Linear":           0,
				"Residual":         0,
				"Add":              0,
				"GELU(none)":       0,
			}
			if form == PatchConv {
				want["LinearPacked"]--
			}
			for name, n := range want {
				if ops[name] != n {
					t.Errorf("%s: frozen graph has %d %s, want %d (ops %v)", form, ops[name], name, n, ops)
				}
			}
			if n := ops["AttentionEval(h=2)"]; n != c.Depth {
				t.Errorf("frozen graph has %d AttentionEval, want %d (ops %v)", n, c.Depth, ops)
			}
		}
	}
}

// TestFrozenSnapshot: Frozen graphs keep the Linear weights the model had
// at its first Frozen build (the documented price), and share one copy.
func TestFrozenSnapshot(t *testing.T) {
	m := randomModel(t, tinyConfig(), 1)
	g1, err := m.Build(2, BuildOptions{Frozen: true})
	if err != nil {
		t.Fatal(err)
	}
	fillInput(g1, 1)
	runGraph(t, g1.G)
	before := append([]float64(nil), g1.Logits.Value().Data().([]float64)...)
	InitConst(m.Param("head.weight").Value, 3) // a later change to the model
	g2, err := m.Build(2, BuildOptions{Frozen: true})
	if err != nil {
		t.Fatal(err)
	}
	fillInput(g2, 1)
	runGraph(t, g2.G)
	if d := maxDiff(g2.Logits.Value().Data().([]float64), before); d != 0 {
		t.Errorf("a second Frozen graph saw the changed head (logits moved by %g)", d)
	}
	if _, err := m.Build(2, BuildOptions{Frozen: true, Training: true}); err == nil {
		t.Error("Build accepted Frozen with Training")
	}
}

// TestFrozenFloat32: the float32 Frozen graph matches the float32 eval
// graph to float32 rounding.
func TestFrozenFloat32(t *testing.T) {
	c := tinyConfig()
	c.ImgSize, c.PatchSize, c.EmbedDim, c.NumHeads, c.Depth = Size2{16, 16}, 4, 32, 2, 2
	m, err := New(c, tensor.Float32, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range m.Params {
		InitTruncNormal(p.Value, 0.3, randFor(p.Name))
	}
	var out [2][]float32
	for i, opts := range []BuildOptions{{}, {Frozen: true}} {
		g, err := m.Build(4, opts)
		if err != nil {
			t.Fatal(err)
		}
		fillInput32(g)
		runGraph(t, g.G)
		out[i] = g.Logits.Value().Data().([]float32)
	}
	for j := range out[0] {
		if d := out[1][j] - out[0][j]; d > 1e-5 || d < -1e-5 {
			t.Fatalf("logit %d: frozen %v, eval %v", j, out[1][j], out[0][j])
		}
	}
}

// TestFrozenMatchesEvalDistilled: a distilled model's Frozen graph computes
// the evaluation graph's logits, the mean of its two heads (float64: to
// rounding), its last block only on the two prefix rows, both heads packed.
func TestFrozenMatchesEvalDistilled(t *testing.T) {
	c := tinyConfig()
	c.ImgSize, c.PatchSize, c.InChans, c.Depth, c.Distilled = Size2{8, 8}, 2, 3, 2, true // 18 tokens
	plain, frozen := plainAndFrozen(t, c)
	if d := maxDiff(frozen.Logits.Value().Data().([]float64), plain.Logits.Value().Data().([]float64)); d > 1e-12 {
		t.Errorf("frozen logits differ from eval by %g", d)
	}
	pf, tok, d := plain.Features.Value().Data().([]float64), c.NumTokens(), c.EmbedDim
	var prefix []float64
	for b := 0; b < batch; b++ {
		prefix = append(prefix, pf[b*tok*d:b*tok*d+2*d]...)
	}
	if diff := maxDiff(frozen.Features.Value().Data().([]float64), prefix); diff > 1e-12 {
		t.Errorf("frozen features differ from eval's prefix rows by %g", diff)
	}
	if n := opCounts(frozen.G)["LinearPacked"]; n != c.Depth+3 { // qkv per block; patch embed; head, head_dist
		t.Errorf("frozen graph has %d LinearPacked, want %d", n, c.Depth+3)
	}
}

// batch is the batch of plainAndFrozen's graphs.
const batch = 3

// plainAndFrozen builds a random model of c as an evaluation graph and as
// a Frozen one, both of batch images, and runs both on the same input.
func plainAndFrozen(t *testing.T, c Config) (plain, frozen *Graph) {
	t.Helper()
	m := randomModel(t, c, 1)
	plain, err := m.Build(batch, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if frozen, err = m.Build(batch, BuildOptions{Frozen: true}); err != nil {
		t.Fatal(err)
	}
	fillInput(plain, 2)
	fillInput(frozen, 2)
	runGraph(t, plain.G)
	runGraph(t, frozen.G)
	return plain, frozen
}
