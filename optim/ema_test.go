package optim

import (
	"math"
	"strings"
	"testing"
)

func TestEMADecay(t *testing.T) {
	plain, _ := NewEMA(0.9998, false, nil)
	warm, _ := NewEMA(0.9998, true, nil)
	tests := []struct {
		e    *EMA
		step int
		want float64
	}{
		{plain, 0, 0},
		{plain, 1, 0}, // the first update copies, as timm's ModelEmaV3 with a step
		{plain, 2, 0.9998},
		{plain, 1000, 0.9998},
		{warm, 1, 0},
		{warm, 2, 1 - math.Pow(2, -0.75)},         // s = 1: 0.4054…
		{warm, 11, 1 - math.Pow(11, -0.75)},       // s = 10
		{warm, 10001, 1 - math.Pow(10001, -0.75)}, // ≈ 0.999
		{warm, 100_000_000, 0.9998},               // capped at decay
	}
	for _, tc := range tests {
		if got := tc.e.Decay(tc.step); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("warmup %v: Decay(%d) = %.17g, want %.17g", tc.e.warmup, tc.step, got, tc.want)
		}
	}
}

// TestEMAUpdate checks the moving average by hand: decay 0.5, no warmup.
func TestEMAUpdate(t *testing.T) {
	w := []float32{1, -2}
	ps := []Param{{Name: "w", Shape: []int{2}, Value: w}}
	e, err := NewEMA(0.5, false, ps)
	if err != nil {
		t.Fatal(err)
	}
	w[0], w[1] = 3, 2 // after step 1: copied
	steps := []struct {
		value, want [2]float32
	}{
		{[2]float32{3, 2}, [2]float32{3, 2}},   // step 1: decay 0
		{[2]float32{5, 0}, [2]float32{4, 1}},   // step 2: (3+5)/2, (2+0)/2
		{[2]float32{0, 1}, [2]float32{2, 1}},   // step 3
		{[2]float32{2, -7}, [2]float32{2, -3}}, // step 4
	}
	for i, st := range steps {
		w[0], w[1] = st.value[0], st.value[1]
		if err := e.Update(ps, i+1); err != nil {
			t.Fatal(err)
		}
		if got := e.Weights()["w"]; got[0] != st.want[0] || got[1] != st.want[1] {
			t.Errorf("step %d: EMA %v, want %v", i+1, got, st.want)
		}
	}
}

func TestEMAStateRoundTrip(t *testing.T) {
	mk := func() []Param {
		return []Param{
			{Name: "a", Shape: []int{2}, Value: []float32{1, 2}},
			{Name: "b", Shape: []int{1}, Value: []float32{3}},
		}
	}
	ps := mk()
	e1, _ := NewEMA(0.9, true, ps)
	for s := 1; s <= 4; s++ {
		ps[0].Value[0] += 1
		ps[1].Value[0] -= 0.5
		if err := e1.Update(ps, s); err != nil {
			t.Fatal(err)
		}
	}
	saved := e1.Weights()
	e2, _ := NewEMA(0.9, true, mk())
	if err := e2.LoadWeights(saved); err != nil {
		t.Fatal(err)
	}
	saved["a"][0] = 99 // the loaded weights are a copy
	ps[0].Value[0] += 1
	if err := e1.Update(ps, 5); err != nil {
		t.Fatal(err)
	}
	if err := e2.Update([]Param{ps[1], ps[0]}, 5); err != nil {
		t.Fatal(err)
	}
	w1, w2 := e1.Weights(), e2.Weights()
	for _, name := range []string{"a", "b"} {
		for i := range w1[name] {
			if w1[name][i] != w2[name][i] {
				t.Errorf("%s[%d]: resumed %v, uninterrupted %v", name, i, w2[name][i], w1[name][i])
			}
		}
	}
}

func TestEMAErrors(t *testing.T) {
	ps := []Param{{Name: "a", Shape: []int{2}, Value: []float32{1, 2}}}
	if _, err := NewEMA(1.5, false, ps); err == nil || !strings.Contains(err.Error(), "decay must be in [0,1], got 1.5") {
		t.Errorf("decay 1.5: %v", err)
	}
	if _, err := NewEMA(0.9, false, append(ps, ps[0])); err == nil || !strings.Contains(err.Error(), `"a" appears twice`) {
		t.Errorf("duplicate: %v", err)
	}
	e, _ := NewEMA(0.9, false, ps)
	tests := []struct {
		name   string
		err    error
		errHas string
	}{
		{"unknown param", e.Update([]Param{ps[0], {Name: "b", Shape: []int{1}, Value: []float32{0}}}, 3), `"b" has no EMA`},
		{"missing param", e.Update(nil, 3), `missing from the 0 parameters, first "a"`},
		{"resized", e.Update([]Param{{Name: "a", Shape: []int{3}, Value: []float32{1, 2, 3}}}, 3), `"a" has 3 values, its EMA has 2`},
		{"load unknown", e.LoadWeights(map[string][]float32{"a": {1, 2}, "z": {1}}), `saved EMA has "z", model does not`},
		{"load missing", e.LoadWeights(map[string][]float32{}), `model has "a", saved EMA does not`},
		{"load length", e.LoadWeights(map[string][]float32{"a": {1}}), `"a": saved EMA has 1 values, model has 2`},
	}
	for _, tc := range tests {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.errHas) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, tc.err, tc.errHas)
		}
	}
	if got := e.Weights()["a"]; got[0] != 1 || got[1] != 2 {
		t.Errorf("rejected calls changed the EMA to %v", got)
	}
}
