package layers

import "strings"

// The parameter groups the model supplies to its optimizer, as timm's
// VisionTransformer does with no_weight_decay() and group_matcher(): the
// optimizer (optim) knows no parameter names. New sets them on every Param
// (Param.NoWeightDecay, Param.LayerID).

// noWeightDecay reports whether the named tensor is in timm's
// VisionTransformer.no_weight_decay(): pos_embed and cls_token (and
// dist_token, which this model does not have). The optimizer exempts biases
// and 1-D tensors itself, as timm's param_groups_weight_decay does.
func noWeightDecay(name string) bool {
	switch name {
	case "pos_embed", "cls_token", "dist_token":
		return true
	}
	return false
}

// layerID returns the layer id timm's param_groups_layer_decay gives the
// named parameter of a ViT with depth blocks, through
// VisionTransformer.group_matcher:
//
//	cls_token*, pos_embed*, patch_embed*  → 0
//	blocks.i.*                            → i+1
//	norm*  (the final norm)               → depth (timm's MATCH_PREV_GROUP: it joins the last block)
//	anything else (head, fc_norm, …)      → depth+1
//
// so there are depth+2 ids. The final norm sharing the last block's id is
// what timm does (group_with_matcher maps r'^norm' to the previous group); it
// gets lr scale decay¹, not decay⁰.
func layerID(name string, depth int) int {
	switch {
	case strings.HasPrefix(name, "cls_token"), strings.HasPrefix(name, "pos_embed"), strings.HasPrefix(name, "patch_embed"):
		return 0
	case strings.HasPrefix(name, "norm"):
		return depth
	}
	if i, ok := blockIndex(name); ok {
		return i + 1
	}
	return depth + 1
}

// blockIndex returns i for a name matching timm's r'^blocks\.(\d+)'.
func blockIndex(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "blocks.")
	if !ok {
		return 0, false
	}
	i, n := 0, 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' && i < 1<<30 {
		i = i*10 + int(rest[n]-'0')
		n++
	}
	return i, n > 0
}
