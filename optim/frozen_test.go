package optim

import (
	"math"
	"slices"
	"testing"
)

// TestFrozenParams checks what Frozen means to the optimizer, the clipping
// and the EMA: a frozen tensor is never changed (not even by weight decay),
// has no moments in the state, gives no gradient to the norm (its Grad,
// huge and NaN here, is ignored), keeps its EMA equal to its value, and
// still counts for the layer ids, so the trainable tensors update exactly
// as they would with the frozen one trainable but with a zero learning-rate
// share.
func TestFrozenParams(t *testing.T) {
	c := testConfig(0.1, 0.5)
	o := newTestAdamW(t, c)
	frozen := Param{Name: "head.weight", Shape: []int{2, 1}, Value: []float32{1, -2}, Grad: []float32{1e30, float32(math.NaN())}, LayerID: 2, Frozen: true}
	live := Param{Name: "blocks.0.mlp.fc1.weight", Shape: []int{1, 1}, Value: []float32{1}, Grad: []float32{0.5}, LayerID: 1}
	params := []Param{frozen, live}
	ema, err := NewEMA(0.5, false, params)
	if err != nil {
		t.Fatal(err)
	}
	for step := 1; step <= 3; step++ {
		if norm := ClipGradNorm(params, 1); norm != 0.5 {
			t.Fatalf("step %d: grad norm %v, want 0.5 (the frozen gradient ignored)", step, norm)
		}
		if name, ok := GradsFinite(params); !ok {
			t.Fatalf("step %d: GradsFinite flags %s", step, name)
		}
		if err := o.Step(params, 0.1); err != nil {
			t.Fatal(err)
		}
		if err := ema.Update(params, step); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(frozen.Value, []float32{1, -2}) {
		t.Errorf("frozen weight changed to %v", frozen.Value)
	}
	// blocks.0 at layer 1 of 3 (0…2) with layer decay 0.5: lr' = 0.05, as in
	// TestAdamWHandComputed; a frozen head that no longer counted would
	// make it the top layer, at lr' = 0.1.
	if got, want := float64(live.Value[0]), 0.835823627985025; math.Abs(got-want) > 1e-6 {
		t.Errorf("trainable weight %v, want %v", got, want)
	}
	_, m, v := o.State()
	if _, ok := m["head.weight"]; ok || len(m) != 1 || len(v) != 1 {
		t.Errorf("moments for %d and %d tensors (head.weight present: %v), want only the trainable one", len(m), len(v), ok)
	}
	if w := ema.Weights()["head.weight"]; !slices.Equal(w, frozen.Value) {
		t.Errorf("EMA of the frozen weight %v, want %v", w, frozen.Value)
	}
	// A state saved with the tensor frozen does not fit it trainable.
	o2 := newTestAdamW(t, c)
	step, m, v := o.State()
	if err := o2.LoadState(step, m, v); err != nil {
		t.Fatal(err)
	}
	params[0].Frozen = false
	params[0].Grad = []float32{0, 0}
	if err := o2.Step(params, 0.1); err == nil {
		t.Error("a state without moments for head.weight was accepted with head.weight trainable")
	}
}
