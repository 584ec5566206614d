// Package graph holds the Gorgonia ops the ViT is built from: coarse, fused
// operations (Linear, LayerNorm, GELU, attention on a qkv matrix, soft-target
// cross entropy, dropout and drop path) with hand-written backward passes, and
// the finite-difference gradient checker their tests use.
//
// Ops take options (OpOption): WithPrecision sets the precision of an op's
// matrix products (Precision: fp32, or bf16 with autocast's semantics), and
// StoreBF16 keeps an op's output as bfloat16 words (dtype Uint16) when only
// bfloat16 products read it, half the memory and the same bits.
// Recompute makes the backward pass compute a Linear's, a LayerNorm's or a
// Residual's output again instead of keeping it from the forward pass.
// PlanBuffers places the ops' outputs in an Arena by lifetime.
package graph
