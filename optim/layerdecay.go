package optim

import "math"

// LayerScale returns the learning-rate multiplier of timm's layer-wise decay
// (param_groups_layer_decay) for a parameter with layer id id in a model of
// numLayers layer ids: decay^(numLayers − 1 − id), so 1 for the last layer
// id (a ViT's head) and decay^(numLayers−1) for layer 0 (its embeddings).
// decay 0 or 1 means layer decay is off and gives 1.
func LayerScale(id, numLayers int, decay float64) float64 {
	if !layerDecayOn(decay) {
		return 1
	}
	return math.Pow(decay, float64(numLayers-1-id))
}

func layerDecayOn(decay float64) bool { return decay != 0 && decay != 1 }

// numLayers is timm's num_layers: one more than the largest layer id.
func numLayers(params []Param) int {
	n := 0
	for _, p := range params {
		n = max(n, p.LayerID+1)
	}
	return n
}
