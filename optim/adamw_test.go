package optim

import (
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"
)

// testConfig returns DefaultConfig with the given lr-independent knobs.
func testConfig(wd, layerDecay float64) Config {
	c := DefaultConfig()
	c.WeightDecay.Set(wd)
	c.LayerDecay = layerDecay
	return c
}

func newTestAdamW(t *testing.T, c Config) *AdamW {
	t.Helper()
	o, err := NewAdamW(c)
	if err != nil {
		t.Fatalf("NewAdamW: %v", err)
	}
	return o
}

// TestAdamWHandComputed checks three steps of a constant gradient against
// values derived by hand: with g constant the bias-corrected moments are
// m̂ = g and v̂ = g², so every step is w ← w·(1 − lr'·wd) − lr'·g/(|g| + eps).
// With lr 0.1, wd 0.1, g 0.5, eps 1e-8 the step is u = 0.1·0.5/0.50000001 =
// 0.099999998; layer decay 0.5 over layer ids 0…2 (a depth-1 ViT) gives
// lr' = 0.1 for the head, 0.05 for blocks.0, 0.025 for pos_embed.
func TestAdamWHandComputed(t *testing.T) {
	tests := []struct {
		name    string
		shape   []int
		layer   int
		noDecay bool
		want    [3]float64
	}{
		// w1 = 0.99 − u; w2 = 0.99·w1 − u; w3 = 0.99·w2 − u
		{"head.weight", []int{1, 1}, 2, false, [3]float64{0.890000002, 0.78110000398, 0.6732890059402}},
		// no decay (1-D): w_t = 1 − t·u
		{"head.bias", []int{1}, 2, false, [3]float64{0.900000002, 0.800000004, 0.700000006}},
		// lr' = 0.05: keep 0.995, u' = 0.049999999
		{"blocks.0.mlp.fc1.weight", []int{1, 1}, 1, false, [3]float64{0.945000001, 0.890275001995, 0.835823627985025}},
		// lr' = 0.025, no decay (the model's list): w_t = 1 − t·0.0249999995
		{"pos_embed", []int{1, 1, 1}, 0, true, [3]float64{0.9750000005, 0.950000001, 0.9250000015}},
	}
	c := testConfig(0.1, 0.5)
	o := newTestAdamW(t, c)
	params := make([]Param, len(tests))
	for i, tc := range tests {
		params[i] = Param{Name: tc.name, Shape: tc.shape, Value: []float32{1}, Grad: []float32{0.5}, LayerID: tc.layer, NoDecay: tc.noDecay}
	}
	for step := range 3 {
		if err := o.Step(params, 0.1); err != nil {
			t.Fatal(err)
		}
		for i, tc := range tests {
			if got := float64(params[i].Value[0]); math.Abs(got-tc.want[step]) > 2e-7 {
				t.Errorf("step %d %s: got %.10f, want %.10f", step+1, tc.name, got, tc.want[step])
			}
		}
	}
	if o.Steps() != 3 {
		t.Errorf("Steps() = %d, want 3", o.Steps())
	}
}

// refAdamW is AdamW written out in float64 from its definition.
type refAdamW struct {
	b1, b2, eps, wd float64
	t               int
	w, m, v         []float64
}

func (r *refAdamW) step(g []float64, lr float64) {
	r.t++
	for i := range r.w {
		r.w[i] -= lr * r.wd * r.w[i]
		r.m[i] = r.b1*r.m[i] + (1-r.b1)*g[i]
		r.v[i] = r.b2*r.v[i] + (1-r.b2)*g[i]*g[i]
		mHat := r.m[i] / (1 - math.Pow(r.b1, float64(r.t)))
		vHat := r.v[i] / (1 - math.Pow(r.b2, float64(r.t)))
		r.w[i] -= lr * mHat / (math.Sqrt(vHat) + r.eps)
	}
}

// TestAdamWFloat64Reference runs three steps with varying gradients, learning
// rates and betas against the float64 reference, for a decayed, a no-decay and
// a layer-scaled tensor.
func TestAdamWFloat64Reference(t *testing.T) {
	tests := []struct {
		name            string
		shape           []int
		noDecay         bool
		betas           []float64
		wd, layerDecay  float64
		wantWD, wantLRs float64
	}{
		{"blocks.1.attn.proj.weight", []int{2, 3}, false, []float64{0.9, 0.999}, 0.05, 0, 0.05, 1},
		{"blocks.1.attn.proj.bias", []int{6}, false, []float64{0.9, 0.999}, 0.05, 0, 0, 1},
		{"cls_token", []int{1, 1, 6}, true, []float64{0.8, 0.99}, 0.3, 0, 0, 1},
		{"blocks.1.attn.proj.weight", []int{3, 2}, false, []float64{0.5, 0.9}, 0.2, 0.7, 0.2, 0.7 * 0.7}, // ids 0…4 (depth 3): id 2 → 0.7^(4−2)
	}
	grads := [3][]float64{
		{0.3, -1.2, 0.05, 2.0, -0.7, 0.0},
		{-0.1, -0.9, 0.4, 1.5, 0.2, 1e-3},
		{0.6, 0.2, -0.3, -2.5, 0.9, -4e-3},
	}
	lrs := [3]float64{0.01, 0.03, 0.02}
	for _, tc := range tests {
		c := testConfig(tc.wd, tc.layerDecay)
		c.Betas = tc.betas
		o := newTestAdamW(t, c)
		w0 := []float64{0.5, -0.25, 1.0, 0.125, -2.0, 0.75}
		ref := &refAdamW{b1: tc.betas[0], b2: tc.betas[1], eps: c.Eps, wd: tc.wantWD,
			w: append([]float64(nil), w0...), m: make([]float64, 6), v: make([]float64, 6)}
		p := Param{Name: tc.name, Shape: tc.shape, Value: make([]float32, 6), Grad: make([]float32, 6), NoDecay: tc.noDecay, LayerID: 2}
		// The head sets the number of layer ids (5), as in the whole model.
		head := Param{Name: "head.weight", Shape: []int{1}, Value: make([]float32, 1), Grad: make([]float32, 1), LayerID: 4}
		for i, x := range w0 {
			p.Value[i] = float32(x)
		}
		for s := range 3 {
			for i, g := range grads[s] {
				p.Grad[i] = float32(g)
			}
			if err := o.Step([]Param{p, head}, lrs[s]); err != nil {
				t.Fatal(err)
			}
			ref.step(grads[s], lrs[s]*tc.wantLRs)
			for i := range ref.w {
				if d := math.Abs(float64(p.Value[i]) - ref.w[i]); d > 1e-6*math.Max(1, math.Abs(ref.w[i])) {
					t.Errorf("%s betas %v step %d [%d]: got %.9f, want %.9f", tc.name, tc.betas, s+1, i, p.Value[i], ref.w[i])
				}
			}
		}
	}
}

// golden is optim/testdata/adamw_torch.json, written by
// experiments/goldens/optim_golden.py with torch.
type golden struct {
	Depth       int       `json:"depth"`
	LayerDecay  float64   `json:"layer_decay"`
	WeightDecay float64   `json:"weight_decay"`
	Betas       []float64 `json:"betas"`
	Eps         float64   `json:"eps"`
	MaxNorm     float64   `json:"max_norm"`
	EMADecay    float64   `json:"ema_decay"`
	Params      []struct {
		Name    string    `json:"name"`
		Shape   []int     `json:"shape"`
		Value   []float32 `json:"value"`
		LayerID int       `json:"layer_id"`
	} `json:"params"`
	Steps []struct {
		LR           float64              `json:"lr"`
		Grads        map[string][]float32 `json:"grads"`
		Norm         float64              `json:"norm"`
		ClippedGrads map[string][]float32 `json:"clipped_grads"`
		Values       map[string][]float32 `json:"values"`
		EMADecay     float64              `json:"ema_decay"`
		EMA          map[string][]float32 `json:"ema"`
	} `json:"steps"`
	ExpAvg   map[string][]float32 `json:"exp_avg"`
	ExpAvgSq map[string][]float32 `json:"exp_avg_sq"`
}

func loadGolden(t *testing.T) *golden {
	t.Helper()
	b, err := os.ReadFile("testdata/adamw_torch.json")
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatalf("testdata/adamw_torch.json: %v", err)
	}
	return &g
}

// maxRelDiff returns max |a−b| / max(|b|, 1e-3) over two equal-length slices.
func maxRelDiff(t *testing.T, what string, a, b []float32) float64 {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d values, want %d", what, len(a), len(b))
	}
	var worst float64
	for i := range a {
		d := math.Abs(float64(a[i])-float64(b[i])) / math.Max(math.Abs(float64(b[i])), 1e-3)
		worst = math.Max(worst, d)
	}
	return worst
}

// TestAgainstTorch replays the torch golden: clip_grad_norm_ then AdamW with
// timm's parameter groups and layer decay, then the warmed-up EMA, for 5 steps.
func TestAgainstTorch(t *testing.T) {
	g := loadGolden(t)
	c := DefaultConfig()
	c.LayerDecay, c.Betas, c.Eps = g.LayerDecay, g.Betas, g.Eps
	c.WeightDecay.Set(g.WeightDecay)
	o := newTestAdamW(t, c)
	params := make([]Param, len(g.Params))
	for i, p := range g.Params {
		// The golden's layer ids are timm's; no_weight_decay() is the ViT's.
		params[i] = Param{Name: p.Name, Shape: p.Shape, Value: append([]float32(nil), p.Value...), Grad: make([]float32, len(p.Value)),
			LayerID: p.LayerID, NoDecay: p.Name == "pos_embed" || p.Name == "cls_token"}
	}
	ema, err := NewEMA(g.EMADecay, true, params)
	if err != nil {
		t.Fatal(err)
	}
	var worstW, worstG, worstE float64
	for s, st := range g.Steps {
		for _, p := range params {
			copy(p.Grad, st.Grads[p.Name])
		}
		norm := ClipGradNorm(params, g.MaxNorm)
		if math.Abs(norm-st.Norm) > 1e-6*st.Norm {
			t.Errorf("step %d: norm %.9g, torch %.9g", s+1, norm, st.Norm)
		}
		for _, p := range params {
			worstG = math.Max(worstG, maxRelDiff(t, p.Name, p.Grad, st.ClippedGrads[p.Name]))
		}
		if err := o.Step(params, st.LR); err != nil {
			t.Fatal(err)
		}
		if d := ema.Decay(s + 1); math.Abs(d-st.EMADecay) > 1e-15 {
			t.Errorf("step %d: EMA decay %.17g, timm %.17g", s+1, d, st.EMADecay)
		}
		if err := ema.Update(params, s+1); err != nil {
			t.Fatal(err)
		}
		ew := ema.Weights()
		for _, p := range params {
			worstW = math.Max(worstW, maxRelDiff(t, p.Name, p.Value, st.Values[p.Name]))
			worstE = math.Max(worstE, maxRelDiff(t, p.Name, ew[p.Name], st.EMA[p.Name]))
		}
	}
	_, m, v := o.State()
	var worstM float64
	for _, p := range params {
		worstM = math.Max(worstM, maxRelDiff(t, p.Name+" exp_avg", m[p.Name], g.ExpAvg[p.Name]))
		worstM = math.Max(worstM, maxRelDiff(t, p.Name+" exp_avg_sq", v[p.Name], g.ExpAvgSq[p.Name]))
	}
	t.Logf("max relative difference to torch: weights %.2g, clipped grads %.2g, EMA %.2g, moments %.2g", worstW, worstG, worstE, worstM)
	for what, d := range map[string]float64{"weights": worstW, "clipped grads": worstG, "EMA": worstE, "moments": worstM} {
		if d > 1e-5 {
			t.Errorf("%s differ from torch by up to %.2g (relative)", what, d)
		}
	}
}

// TestAdamWResume checks that State/LoadState into a fresh optimizer
// continues bit for bit like an uninterrupted run, whatever the param order.
func TestAdamWResume(t *testing.T) {
	mk := func() []Param {
		return []Param{
			{Name: "blocks.0.attn.qkv.weight", Shape: []int{2, 2}, Value: []float32{0.1, -0.2, 0.3, 0.4}, Grad: make([]float32, 4), LayerID: 1},
			{Name: "blocks.0.attn.qkv.bias", Shape: []int{2}, Value: []float32{0.5, -0.5}, Grad: make([]float32, 2), LayerID: 1},
			{Name: "head.weight", Shape: []int{1, 1}, Value: []float32{0.25}, Grad: make([]float32, 1), LayerID: 2},
		}
	}
	setGrads := func(ps []Param, s int) {
		for _, p := range ps {
			for i := range p.Grad {
				p.Grad[i] = float32(math.Sin(float64(3*s+i+len(p.Name)))) * 0.1
			}
		}
	}
	c := testConfig(0.05, 0.65)
	full, a := newTestAdamW(t, c), mk()
	for s := range 5 {
		setGrads(a, s)
		if err := full.Step(a, 1e-2); err != nil {
			t.Fatal(err)
		}
	}
	first, b := newTestAdamW(t, c), mk()
	for s := range 2 {
		setGrads(b, s)
		if err := first.Step(b, 1e-2); err != nil {
			t.Fatal(err)
		}
	}
	step, m, v := first.State()
	second := newTestAdamW(t, c)
	if err := second.LoadState(step, m, v); err != nil {
		t.Fatal(err)
	}
	b[0], b[2] = b[2], b[0] // order must not matter
	for s := 2; s < 5; s++ {
		setGrads(b, s)
		if err := second.Step(b, 1e-2); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range a {
		for _, q := range b {
			if p.Name == q.Name {
				for i := range p.Value {
					if p.Value[i] != q.Value[i] {
						t.Errorf("%s[%d]: resumed %v, uninterrupted %v", p.Name, i, q.Value[i], p.Value[i])
					}
				}
			}
		}
	}
	// The exported state is a copy.
	m["blocks.0.attn.qkv.bias"][0] = 42
	if _, m2, _ := second.State(); m2["blocks.0.attn.qkv.bias"][0] == 42 {
		t.Error("State returned the optimizer's own buffers, want a copy")
	}
}

func TestAdamWErrors(t *testing.T) {
	p := func(name string, n int) Param {
		return Param{Name: name, Shape: []int{n, 1}, Value: make([]float32, n), Grad: make([]float32, n)}
	}
	stepped := func(t *testing.T) *AdamW {
		o := newTestAdamW(t, DefaultConfig())
		if err := o.Step([]Param{p("a.weight", 2), p("b.weight", 3)}, 1e-3); err != nil {
			t.Fatal(err)
		}
		return o
	}
	tests := []struct {
		name   string
		run    func(t *testing.T) error
		errHas string
	}{
		{"nan lr", func(t *testing.T) error {
			return newTestAdamW(t, DefaultConfig()).Step([]Param{p("a.weight", 2)}, math.NaN())
		}, "learning rate"},
		{"grad length", func(t *testing.T) error {
			q := p("a.weight", 2)
			q.Grad = q.Grad[:1]
			return newTestAdamW(t, DefaultConfig()).Step([]Param{q}, 1e-3)
		}, `"a.weight": shape [2 1] holds 2 values, Grad has 1`},
		{"value vs shape", func(t *testing.T) error {
			q := p("a.weight", 2)
			q.Shape = []int{3}
			return newTestAdamW(t, DefaultConfig()).Step([]Param{q}, 1e-3)
		}, `"a.weight": shape [3] holds 3 values, Value has 2`},
		{"duplicate on first step", func(t *testing.T) error {
			return newTestAdamW(t, DefaultConfig()).Step([]Param{p("a.weight", 2), p("a.weight", 2)}, 1e-3)
		}, `"a.weight" appears twice`},
		{"duplicate later", func(t *testing.T) error {
			return stepped(t).Step([]Param{p("a.weight", 2), p("a.weight", 2)}, 1e-3)
		}, `"a.weight" appears twice`},
		{"new name", func(t *testing.T) error {
			return stepped(t).Step([]Param{p("a.weight", 2), p("c.weight", 3)}, 1e-3)
		}, `"c.weight" has no AdamW state`},
		{"missing name", func(t *testing.T) error {
			return stepped(t).Step([]Param{p("a.weight", 2)}, 1e-3)
		}, `missing from the 1 parameters, first "b.weight"`},
		{"resized", func(t *testing.T) error {
			return stepped(t).Step([]Param{p("a.weight", 2), p("b.weight", 4)}, 1e-3)
		}, `"b.weight" has 4 values, its AdamW state has 3`},
		{"layer decay without layer ids", func(t *testing.T) error {
			o := newTestAdamW(t, testConfig(0.05, 0.75))
			return o.Step([]Param{p("blocks.2.mlp.fc1.weight", 2), p("head.weight", 2)}, 1e-3)
		}, "every parameter has LayerID 0"},
		{"negative layer id", func(t *testing.T) error {
			q := p("a.weight", 2)
			q.LayerID = -1
			return newTestAdamW(t, DefaultConfig()).Step([]Param{q}, 1e-3)
		}, `"a.weight": negative layer id -1`},
		{"load m/v names differ", func(t *testing.T) error {
			return newTestAdamW(t, DefaultConfig()).LoadState(3,
				map[string][]float32{"a": {1}, "b": {2}}, map[string][]float32{"a": {1}})
		}, `exp_avg (m) has "b", exp_avg_sq (v) does not`},
		{"load m/v lengths differ", func(t *testing.T) error {
			return newTestAdamW(t, DefaultConfig()).LoadState(3,
				map[string][]float32{"a": {1, 2}}, map[string][]float32{"a": {1}})
		}, `"a": exp_avg (m) has 2 values, exp_avg_sq (v) has 1`},
		{"load step 0 with moments", func(t *testing.T) error {
			return newTestAdamW(t, DefaultConfig()).LoadState(0,
				map[string][]float32{"a": {1}}, map[string][]float32{"a": {1}})
		}, "step 0 but 1 first"},
		{"load no moments", func(t *testing.T) error {
			return newTestAdamW(t, DefaultConfig()).LoadState(4, nil, nil)
		}, "step 4 but no moments"},
		{"loaded state vs params", func(t *testing.T) error {
			o := newTestAdamW(t, DefaultConfig())
			if err := o.LoadState(4, map[string][]float32{"a.weight": {1, 2}}, map[string][]float32{"a.weight": {1, 2}}); err != nil {
				t.Fatal(err)
			}
			return o.Step([]Param{p("a.weight", 2), p("b.weight", 3)}, 1e-3)
		}, `adamw step 5: parameter "b.weight" has no AdamW state`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run(t)
			if err == nil || !strings.Contains(err.Error(), tc.errHas) {
				t.Fatalf("got error %v, want one containing %q", err, tc.errHas)
			}
		})
	}
}

// TestAdamWErrorLeavesStateUntouched checks that a rejected step changes
// neither the weights nor the step count.
func TestAdamWErrorLeavesStateUntouched(t *testing.T) {
	o := newTestAdamW(t, DefaultConfig())
	good := Param{Name: "a.weight", Shape: []int{1, 1}, Value: []float32{1}, Grad: []float32{1}}
	bad := Param{Name: "b.weight", Shape: []int{1, 1}, Value: []float32{1}, Grad: nil}
	if err := o.Step([]Param{good, bad}, 0.1); err == nil {
		t.Fatal("want an error for the missing gradient")
	}
	if good.Value[0] != 1 || o.Steps() != 0 {
		t.Fatalf("after a rejected step: value %v, steps %d; want 1, 0", good.Value[0], o.Steps())
	}
	if err := o.Step([]Param{good}, 0.1); err != nil {
		t.Fatalf("a correct step after a rejected one: %v", err)
	}
}

func TestNoWeightDecay(t *testing.T) {
	tests := []struct {
		name    string
		shape   []int
		noDecay bool
		want    bool
	}{
		{"blocks.0.attn.qkv.weight", []int{576, 192}, false, false},
		{"patch_embed.proj.weight", []int{192, 3, 16, 16}, false, false},
		{"head.weight", []int{10, 192}, false, false},
		{"blocks.0.attn.qkv.bias", []int{576}, false, true},
		{"blocks.0.norm1.weight", []int{192}, false, true},
		{"norm.weight", []int{192}, false, true},
		{"x.bias", []int{2, 2}, false, true},
		{"pos_embed", []int{1, 197, 192}, true, true},
		{"pos_embed", []int{1, 197, 192}, false, false}, // the model's list, not the name, exempts it
		{"scalar", nil, false, true},
	}
	for _, tc := range tests {
		if got := NoWeightDecay(Param{Name: tc.name, Shape: tc.shape, NoDecay: tc.noDecay}); got != tc.want {
			t.Errorf("NoWeightDecay(%q, %v, NoDecay %v) = %v, want %v", tc.name, tc.shape, tc.noDecay, got, tc.want)
		}
	}
}
