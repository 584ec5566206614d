package layers

import (
	"fmt"

	G "gorgonia.org/gorgonia"

	"github.com/vitgo/vit/graph"
)

// A Frozen graph (BuildOptions.Frozen) is the forward pass for serving: the
// same function as an evaluation graph, built for speed on weights that do
// not change any more.
//
//   - Every Linear layer (qkv, proj, fc1, fc2, head, and the patch
//     embedding's unfold + Linear) reads its weight packed once into the
//     SGEMM micro-kernel's panels (graph.LinearPacked). The packed copy is
//     made once per model, at the first Frozen Build, and shared by all its
//     Frozen graphs; it costs one more copy of the Linear weights in memory
//     (22 MB for ViT-Ti/16, 88 MB for ViT-S/16). Linear's [out, in] weights
//     are laid out again by the product on every call, once per goroutine
//     when the rows are split over the cores: for ViT-Ti/16 at 224 and
//     batch 1 that took about as long as the products.
//   - The bias, GELU and residual sums are applied to each block of a
//     product by the goroutine that computed it, while it is in cache
//     (graph.LinearPackedGELU for fc1, graph.LinearPackedAdd for attn.proj
//     and mlp.fc2 with their residuals), not in passes of their own; each
//     element gets the same float32 operations in the same order, so the
//     results are those of the unfused ops bit for bit.
//   - Attention is graph.AttentionEval: no probabilities kept (no attention
//     maps), the softmax done per block of query rows in cache, and one
//     image's heads split by rows over the cores.
//   - With a class-token readout the last block, after its qkv, runs on the
//     class-token rows only (see frozenBlock); Graph.Features then holds
//     those rows alone.
//
// The price is the snapshot: a Frozen graph keeps computing with the
// weights the model had at its first Frozen Build, whatever is written into
// Params later (training, EMA, loading another checkpoint into the same
// model). Build Frozen graphs from a model that is done changing; train and
// evaluate during training with ordinary graphs.

// frozenWeights returns the model's packed Linear weights, by the weight's
// name, packing them at the first call.
func (m *VisionTransformer) frozenWeights() (map[string]*graph.PackedWeight, error) {
	m.frozenMu.Lock()
	defer m.frozenMu.Unlock()
	if m.frozen == nil {
		fz := map[string]*graph.PackedWeight{}
		for _, p := range m.Params {
			if !isLinearWeight(p.Name) {
				continue
			}
			w, err := graph.PackWeight(p.Value)
			if err != nil {
				return nil, fmt.Errorf("build: frozen %s: %w", p.Name, err)
			}
			fz[p.Name] = w
		}
		m.frozen = fz
	}
	return m.frozen, nil
}

// isLinearWeight reports whether name is the weight of a Linear layer (or
// of the patch embedding, a Linear on unfolded patches).
func isLinearWeight(name string) bool {
	switch {
	case name == "patch_embed.proj.weight", name == "head.weight":
		return true
	}
	for _, suf := range []string{".attn.qkv.weight", ".attn.proj.weight", ".mlp.fc1.weight", ".mlp.fc2.weight"} {
		if hasSuffix(name, suf) {
			return true
		}
	}
	return false
}

// frozenBlock is block for a Frozen graph (no dropout or drop path: it is
// never a training graph), with the fused ops:
//
//	x = x + proj(attn(qkv(norm1(x))))
//	x = x + fc2(GELU(fc1(norm2(x))))
//
// With a class-token readout the last block computes only the class token's
// rows after its qkv (every token is still a key and a value): its
// attention output, attn.proj, norm2 and MLP are (B, D) instead of
// (B·T, D), and the readout is skipped. Each class-token row gets the same
// arithmetic as in the full block (TestFrozenMatchesEval), for about 1/12
// less work on a 12-block ViT.
func (b *builder) frozenBlock(x *G.Node, i int) (*G.Node, *G.Node) {
	c, pre := b.cfg, fmt.Sprintf("blocks.%d.", i)
	n := b.layerNorm(x, pre+"norm1")
	h := b.linear(n, pre+"attn.qkv") // (B·T, 3D)
	queries := b.tokens
	if i == c.Depth-1 && c.Readout != ReadoutMean {
		queries = 1
		x = b.op(func() (*G.Node, error) { return graph.Readout(x, b.batch, false) }) // class-token rows (B, D)
		b.clsRows = true
	}
	attn := b.op(func() (*G.Node, error) { return graph.AttentionEvalFirst(h, b.batch, b.tokens, c.NumHeads, queries) }) // (B·queries, D)
	x = b.op(func() (*G.Node, error) {
		return graph.LinearPackedAdd(attn, b.packed[pre+"attn.proj.weight"], b.p[pre+"attn.proj.bias"], x)
	})
	n = b.layerNorm(x, pre+"norm2")
	approx := graph.GELUExact
	if c.Act == ActGELUTanh {
		approx = graph.GELUTanh
	}
	h = b.op(func() (*G.Node, error) {
		return graph.LinearPackedGELU(n, b.packed[pre+"mlp.fc1.weight"], b.p[pre+"mlp.fc1.bias"], approx)
	}) // (B·T, hidden)
	x = b.op(func() (*G.Node, error) {
		return graph.LinearPackedAdd(h, b.packed[pre+"mlp.fc2.weight"], b.p[pre+"mlp.fc2.bias"], x)
	})
	return x, attn
}
