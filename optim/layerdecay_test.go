package optim

import (
	"math"
	"testing"
)

// TestLayerScale uses the 14 layer ids of a depth-12 ViT.
func TestLayerScale(t *testing.T) {
	tests := []struct {
		id    int
		decay float64
		want  float64
	}{
		{13, 0.75, 1},                 // head
		{12, 0.75, 0.75},              // last block, final norm
		{4, 0.75, math.Pow(0.75, 9)},  // blocks.3
		{0, 0.75, math.Pow(0.75, 13)}, // embeddings
		{0, 0, 1},                     // off
		{0, 1, 1},                     // off
	}
	for _, tc := range tests {
		if got := LayerScale(tc.id, 14, tc.decay); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("LayerScale(%d, 14, %g) = %.17g, want %.17g", tc.id, tc.decay, got, tc.want)
		}
	}
}

// TestGroups checks that the groups come from the parameters' data: the
// number of layer ids is one more than the largest LayerID, and NoDecay
// exempts a tensor whatever its name.
func TestGroups(t *testing.T) {
	o, err := NewAdamW(testConfig(0.1, 0.5))
	if err != nil {
		t.Fatal(err)
	}
	params := []Param{
		{Name: "emb", Shape: []int{1, 2, 2}, NoDecay: true, LayerID: 0},
		{Name: "w", Shape: []int{2, 2}, LayerID: 1},
		{Name: "b", Shape: []int{2}, LayerID: 1},
		{Name: "out", Shape: []int{2, 2}, LayerID: 3},
	}
	want := []Group{{WeightDecay: 0, LRScale: 0.125}, {WeightDecay: 0.1, LRScale: 0.25}, {WeightDecay: 0, LRScale: 0.25}, {WeightDecay: 0.1, LRScale: 1}}
	got := o.Groups(params)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s: group %+v, want %+v", params[i].Name, got[i], want[i])
		}
	}
}
