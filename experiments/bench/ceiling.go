package main

import (
	"fmt"

	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/layers"
)

// The serving table's ceiling: how close each side's time is to the least
// time the CPU's arithmetic allows, from the peaks of the instruction
// sequences the products run on (kernels.FP32Peak, Int8Peak and
// Int8SaturatingPeak, measured at the start of the run on the run's
// threads). A side's least time per image is its products' FLOPs at the
// peak of their sequence, with nothing else costing anything: no memory
// traffic, no LayerNorm, softmax or GELU, no thread hand-off. So a ratio
// to the peer beyond the "best possible" cell cannot be reached on the CPU,
// whatever the code.

// servingFLOPs is one image's matrix-product FLOPs (2 a multiply-add) in
// the serving graph of model c, and the part of them in the products its
// int8 quantizes. Ours (peer false) runs the last block on the class token
// alone (its qkv on every token: the keys and values), so it does less than
// harness.ForwardFLOPs, and its int8 quantizes qkv, attention's projection,
// the MLP and the linear patch projection. timm's export as ONNX Runtime
// runs it (peer true) does every token's work, and quantize_dynamic leaves
// its Conv patch embedding float.
func servingFLOPs(c layers.Config, peer bool) (total, int8 float64) {
	c = c.WithDefaults()
	f := func(x int) float64 { return float64(x) }
	t, d, dh, l := f(c.NumTokens()), f(c.EmbedDim), f(c.Hidden()), f(c.Depth)
	q := f(c.NumPrefixTokens()) // the rows the last block reads out
	if peer {
		q = t
	}
	qkv := 2 * t * d * 3 * d
	quantized := (l-1)*(2*t*d*d+2*2*t*d*dh) + 2*q*d*d + 2*2*q*d*dh + l*qkv
	attention := (l-1)*2*2*t*t*d + 2*2*q*t*d
	embed := 2 * f(c.NumPatches()) * f(c.InChans*c.PatchSize*c.PatchSize) * d
	head := 2 * d * f(c.NumClasses) * f(c.NumPrefixTokens())
	total = quantized + attention + embed + head
	if !peer {
		quantized += embed
	}
	return total, quantized
}

// leastMs is the least time of one image, in ms, whose products do total
// FLOPs, int8 of them on a sequence of peak int8Peak, the rest at fp32Peak
// (both in G operations a second); 0 when a peak it needs is unknown.
func leastMs(total, int8, fp32Peak, int8Peak float64) float64 {
	if !(fp32Peak > 0) || (int8 > 0 && !(int8Peak > 0)) {
		return 0
	}
	ms := (total - int8) / fp32Peak / 1e6
	if int8 > 0 {
		ms += int8 / int8Peak / 1e6
	}
	return ms
}

// Ceiling says whether the run measured the peaks (the ceiling table is
// shown).
func (r servingResults) Ceiling() bool { return r.FP32Peak > 0 }

// CeilingLines are the ceiling table's lines: per row a model, a precision
// and, per batch, ours' least time over its time (the share of the
// ceiling ours reaches), the same for ONNX Runtime in that precision, and
// the best ours / ONNX Runtime possible: at batch 1 our least time over its
// time (no lower latency ratio can be had), at 8 and 32 its time over our
// least time (no higher throughput ratio). "—" where a side did not run
// or its ceiling is unknown (ONNX Runtime's int8 on a CPU where it runs
// another sequence than the one measured).
func (r servingResults) CeilingLines() [][]string {
	var out [][]string
	for _, row := range r.Rows {
		int8, peerInt8 := row.Int8FLOPs, row.PeerInt8FLOPs // the products each side's int8 quantizes
		if row.Precision != graph.INT8 {
			int8, peerInt8 = 0, 0
		}
		ours := leastMs(row.FLOPs, int8, r.FP32Peak, r.Int8Peak)
		peer := leastMs(row.PeerFLOPs, peerInt8, r.FP32Peak, r.Int8SatPeak)
		if row.Precision == graph.BF16 || !(ours > 0) {
			continue // the bf16 products' ceiling is the precision table's (BF16Peak)
		}
		c := []string{row.Model, string(row.Precision)}
		pct := func(least float64, t timing) string { return fmt.Sprintf("%.0f %%", 100*least/perImageMs(t)) }
		for i, b := range servingBatches {
			if i >= len(row.Ours) {
				c = append(c, "—", "—", "—")
				continue
			}
			c = append(c, pct(ours, row.Ours[i]))
			if i >= len(row.ORT) || !(peer > 0) {
				c = append(c, "—", "—")
				continue
			}
			o := row.ORT[i]
			best := perImageMs(o) / ours
			if b == 1 {
				best = ours / perImageMs(o)
			}
			c = append(c, pct(peer, o), fmt.Sprintf("%.2f×", best))
		}
		out = append(out, c)
	}
	return out
}

// perImageMs is one image's share of a run's median time.
func perImageMs(t timing) float64 { return t.MedianMs / float64(t.Batch) }
