// Package layers is the Vision Transformer (Dosovitskiy et al., 2021) built as
// a Gorgonia graph from the ops in package graph: patch embedding, class
// token, learned position table, pre-norm blocks of multi-head self-attention
// and MLP, final LayerNorm, class-token or mean readout, linear head.
//
// Parameters carry timm's state_dict names and shapes (`blocks.0.attn.qkv.weight`
// [3D, D], …), so weights move between this package and timm unchanged.
// Every parameter is one row of params.go: its name, shape, init scheme,
// optimizer groups and whether a serving graph packs it are read from there
// by ParamShapes, New, Init and Build. The forward pass (vit.go) is timm's
// forward_features (patch embedding, blocks, final norm) then forward_head
// (readout, classifier); a Frozen serving graph is the same builder with
// packed weights and fused ops (frozen.go). Its share of the memory
// estimate, parameters and activations from the config alone, is
// memory.go's (ParamBytes, Config.Activations). The model knows no training
// loop, files or data sets.
package layers
