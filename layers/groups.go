package layers

// The parameter groups the model supplies to its optimizer, as timm's
// VisionTransformer does with no_weight_decay() and group_matcher(): the
// optimizer (optim) knows no parameter names. New sets them on every Param
// (Param.NoWeightDecay, Param.LayerID) from the rows of params.go.

// layerGroup is where a parameter falls in timm's group_matcher, which
// param_groups_layer_decay turns into layer ids for a ViT of depth blocks:
//
//	cls_token*, pos_embed*, patch_embed*  → 0
//	blocks.i.*                            → i+1
//	norm*  (the final norm)               → depth (timm's MATCH_PREV_GROUP: it joins the last block)
//	anything else (head, fc_norm, …)      → depth+1
//
// so there are depth+2 ids. The final norm sharing the last block's id is
// what timm does (group_with_matcher maps r'^norm' to the previous group); it
// gets lr scale decay¹, not decay⁰.
type layerGroup uint8

const (
	groupEmbed     layerGroup = iota // the stem: 0
	groupBlock                       // block i: i+1
	groupFinalNorm                   // the final norm: depth, with the last block
	groupHead                        // the classifier: depth+1
)

// layerID returns the layer id of a parameter of group g in block (for
// groupBlock) of a ViT with depth blocks.
func (g layerGroup) layerID(block, depth int) int {
	switch g {
	case groupEmbed:
		return 0
	case groupBlock:
		return block + 1
	case groupFinalNorm:
		return depth
	}
	return depth + 1
}
