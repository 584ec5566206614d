// Package graph holds the Gorgonia ops the ViT is built from: coarse, fused
// operations (Linear, LayerNorm, GELU, attention on a qkv matrix, soft-target
// cross entropy, dropout and drop path) with hand-written backward passes, and
// the finite-difference gradient checker their tests use.
package graph
