package layers

import (
	"fmt"

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
//     (22 MB for ViT-Ti/16, 88 MB for ViT-S/16) unless ReleaseFloatWeights
//     drops the float one (release.go). A Frozen graph binds no node to the
//     float tensor of a weight it reads packed. Linear's [out, in] weights
//     are laid out again by the product on every call, once per goroutine
//     when the rows are split over the cores: at batch 1 a product does
//     only a few hundred FLOPs per weight element, so that copy is a large
//     share of it.
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
//     class-token rows only (see builder.block); Graph.Features then holds
//     those rows alone.
//
// These are options of the one forward pass (vit.go: block, linear,
// linearResidual, linearAct, attention), taken when the builder holds
// packed weights; which weights are packed is the packed flag of their rows
// in params.go.
//
// The price is the snapshot: a Frozen graph keeps computing with the
// weights the model had at its first Frozen Build, whatever is written into
// Params later (training, EMA, loading another checkpoint into the same
// model). Build Frozen graphs from a model that is done changing; train and
// evaluate during training with ordinary graphs.

// frozenWeights returns the model's packed Linear weights (the rows of
// params.go flagged packed) for products in precision prec, by the weight's
// name, packing them at the first call for that precision.
func (m *VisionTransformer) frozenWeights(prec graph.Precision) (map[string]*graph.PackedWeight, error) {
	m.frozenMu.Lock()
	defer m.frozenMu.Unlock()
	if m.frozen[prec] == nil {
		fz := map[string]*graph.PackedWeight{}
		for _, p := range m.Params {
			if !m.readsPacked(p) {
				continue
			}
			if p.Value == nil {
				return nil, fmt.Errorf("build: frozen %s: %w", prec, m.releasedError(p.Name))
			}
			wp := prec
			if prec.IsInt8() && p.spec.group == groupHead {
				wp = graph.FP32 // as ONNX Runtime's quantize_dynamic leaves the head's Gemm float
			}
			w, err := graph.PackWeight(p.Value, graph.WithPrecision(wp))
			if err != nil {
				return nil, fmt.Errorf("build: frozen %s: %w", p.Name, err)
			}
			fz[p.Name] = w
		}
		if m.frozen == nil {
			m.frozen = map[graph.Precision]map[string]*graph.PackedWeight{}
		}
		m.frozen[prec] = fz
	}
	return m.frozen[prec], nil
}

// readsPacked reports whether a Frozen graph reads p packed: the rows of
// params.go flagged packed, but for a conv patch embedding's weight, which
// Gorgonia's convolution reads as it is.
func (m *VisionTransformer) readsPacked(p *Param) bool {
	return p.spec.flags&packed != 0 && !(p.Name == "patch_embed.proj.weight" && m.Config.PatchEmbed == PatchConv)
}
