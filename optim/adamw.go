package optim

import (
	"fmt"
	"math"
	"slices"
)

// AdamW is torch.optim.AdamW (amsgrad off) over named float32 tensors, with
// timm's parameter groups as the model supplies them in each [Param]: no
// weight decay for the tensors [NoWeightDecay] reports, and a per-parameter
// learning-rate scale from [LayerScale] of its LayerID when layer decay is
// on. Its state is the step count and two moments per parameter name; see
// [AdamW.State] and [AdamW.LoadState].
type AdamW struct {
	beta1, beta2 float64
	eps          float64
	weightDecay  float64
	layerDecay   float64 // 0 or 1: off
	step         int     // steps taken
	m, v         *bank   // nil until the first Step or a LoadState with step > 0
}

// NewAdamW returns an AdamW with the hyper-parameters of c (betas, eps,
// weight_decay, layer_decay); zero fields of c mean the defaults
// (Config.WithDefaults).
func NewAdamW(c Config) (*AdamW, error) {
	c = c.WithDefaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	o := &AdamW{beta1: c.Betas[0], beta2: c.Betas[1], eps: c.Eps, weightDecay: c.WeightDecay.Value()}
	if layerDecayOn(c.LayerDecay) {
		o.layerDecay = c.LayerDecay
	}
	return o, nil
}

// Steps returns the number of steps taken (torch's state["step"]); after a
// Step it is the 1-based index t of that step.
func (o *AdamW) Steps() int { return o.step }

// Group is what Step applies to one parameter besides the shared
// hyper-parameters: its weight decay and its learning-rate multiplier.
type Group struct {
	WeightDecay float64 // 0 for [NoWeightDecay] tensors
	LRScale     float64 // [LayerScale] of its LayerID; 1 without layer decay
}

// Groups returns the group of each parameter, parallel to params, as Step
// applies them. As in timm, the number of layer ids is one more than the
// largest LayerID among params, so params must be the whole model, as Step
// requires anyway.
func (o *AdamW) Groups(params []Param) []Group {
	n := numLayers(params)
	out := make([]Group, len(params))
	for i, p := range params {
		out[i] = o.group(p, n)
	}
	return out
}

// group returns the group of p in a model of numLayers layer ids.
func (o *AdamW) group(p Param, numLayers int) Group {
	return groupOf(p, numLayers, o.weightDecay, o.layerDecay)
}

// Step applies one AdamW update with learning rate lr to every parameter
// that is not Frozen, in place on Value, reading Grad; Frozen ones are left
// as they are and have no state. The parameter list must name the same
// tensors, frozen alike, on every call (any order). Before the update it checks every parameter's
// lengths and name against the state; on error nothing is modified.
//
// Per parameter, with t the new step count, lr' = lr·LRScale and wd the
// weight decay of its [Group], in torch's order and rounding
// (scalars in float64, rounded to float32 where torch multiplies a float32
// tensor by them):
//
//	w ← w·(1 − lr'·wd)
//	m ← m·β1 + (1−β1)·g
//	v ← v·β2 + ((1−β2)·g)·g
//	w ← w + (−lr'/(1−β1^t))·m / (√v/√(1−β2^t) + eps)
//
// Against torch 1.13 (testdata/adamw_torch.json: 5 steps with clipping,
// layer decay and the EMA) weights and moments stay within 1e-5 relative
// (TestAgainstTorch). torch's AVX2 kernel fuses m·β1 + (1−β1)·g into one
// FMA, which this loop deliberately does not, so results do not depend on
// the CPU. The update runs on every core over fixed pieces of the
// parameters; the result does not depend on the number of cores.
func (o *AdamW) Step(params []Param, lr float64) error {
	if err := checkLR("adamw", o.step+1, lr); err != nil {
		return err
	}
	if err := o.prepare(params); err != nil {
		return fmt.Errorf("adamw step %d: %w", o.step+1, err)
	}
	o.step++
	t := float64(o.step)
	bc1 := 1 - math.Pow(o.beta1, t)
	bc2Sqrt := math.Sqrt(1 - math.Pow(o.beta2, t))
	b1, b2 := float32(o.beta1), float32(o.beta2)
	c1, c2 := float32(1-o.beta1), float32(1-o.beta2)
	eps, bc := float32(o.eps), float32(bc2Sqrt)
	// Per-parameter constants first, then the elementwise update over fixed
	// pieces on every core: each element's arithmetic is the serial loop's.
	type job struct {
		w, g, m, v    []float32
		keep, negStep float32
	}
	jobs := make([]job, len(params))
	layers := numLayers(params)
	for i, p := range params {
		if p.Frozen {
			continue // an empty job: no moments, no decay, no update
		}
		group := o.group(p, layers)
		plr := lr * group.LRScale
		jobs[i] = job{w: p.Value, g: p.Grad, m: o.m.slots[p.Name].data, v: o.v.slots[p.Name].data,
			keep:    float32(1 - plr*group.WeightDecay), // exactly 1 without decay
			negStep: float32(-plr / bc1)}
	}
	lens := valueLens(params)
	for i, p := range params {
		if p.Frozen {
			lens[i] = 0
		}
	}
	forPieces(lens, func(pc piece) {
		j := jobs[pc.p]
		w := j.w[pc.lo:pc.hi]
		m, v, g := j.m[pc.lo:pc.hi], j.v[pc.lo:pc.hi], j.g[pc.lo:pc.hi]
		m, v, g = m[:len(w)], v[:len(w)], g[:len(w)] // one bounds check for the loop
		keep, negStep := j.keep, j.negStep
		for i := range w {
			gi := g[i]
			mi := float32(m[i]*b1) + float32(c1*gi)
			vi := float32(v[i]*b2) + float32(float32(c2*gi)*gi)
			m[i], v[i] = mi, vi
			denom := float32(float32(math.Sqrt(float64(vi)))/bc) + eps
			w[i] = float32(w[i]*keep) + float32(negStep*mi)/denom
		}
	})
	return nil
}

// prepare checks params against the state, creating zero moments on the
// first step.
func (o *AdamW) prepare(params []Param) error {
	if err := checkParams(params, o.layerDecay); err != nil {
		return err
	}
	params = trainable(params)
	if o.m != nil {
		return o.m.match(params, "AdamW state")
	}
	m, err := newBank(params, false)
	if err != nil {
		return err
	}
	v, _ := newBank(params, false)
	o.m, o.v = m, v
	return nil
}

// State returns a copy of the optimizer's state for a checkpoint: the number
// of steps taken and both moments (exp_avg m, exp_avg_sq v) per parameter
// name. Before the first step the maps are empty.
func (o *AdamW) State() (step int, m, v map[string][]float32) {
	if o.m == nil {
		return o.step, map[string][]float32{}, map[string][]float32{}
	}
	return o.step, o.m.export(), o.v.export()
}

// LoadState replaces the optimizer's state with a copy of one saved by
// [AdamW.State], so the next Step continues the run exactly. m and v must
// hold the same names with equal lengths; they must be empty when step is 0
// and not when it is positive. The names are checked against the parameters
// by the next Step, which fails naming the first one missing on either side.
func (o *AdamW) LoadState(step int, m, v map[string][]float32) error {
	switch {
	case step < 0:
		return fmt.Errorf("adamw state: step must be >= 0, got %d", step)
	case step == 0 && (len(m) > 0 || len(v) > 0):
		return fmt.Errorf("adamw state: step 0 but %d first and %d second moments", len(m), len(v))
	case step > 0 && len(m) == 0:
		return fmt.Errorf("adamw state: step %d but no moments", step)
	}
	if err := checkSameNames(m, v, "exp_avg (m)", "exp_avg_sq (v)"); err != nil {
		return fmt.Errorf("adamw state: %w", err)
	}
	o.step = step
	if step == 0 {
		o.m, o.v = nil, nil
		return nil
	}
	o.m, o.v = bankFrom(m), bankFrom(v)
	return nil
}

// adamWSlots are AdamW's slots: exp_avg and exp_avg_sq, named "m" and "v"
// as the training-state file has always stored them.
var adamWSlots = []string{"m", "v"}

// Slots returns AdamW's slot names, "m" (exp_avg) and "v" (exp_avg_sq).
func (o *AdamW) Slots() []string { return slices.Clone(adamWSlots) }

// SaveState returns [AdamW.State] as an optimizer-neutral [State].
func (o *AdamW) SaveState() State {
	step, m, v := o.State()
	return State{Step: step, Slots: map[string]map[string][]float32{"m": m, "v": v}}
}

// RestoreState is [AdamW.LoadState] from an optimizer-neutral [State]; a
// slot other than "m" and "v" is an error wrapping ErrSlots.
func (o *AdamW) RestoreState(st State) error {
	if err := checkState(OptAdamW, adamWSlots, st); err != nil {
		return err
	}
	return o.LoadState(st.Step, orEmpty(st.Slots["m"]), orEmpty(st.Slots["v"]))
}

// orEmpty returns m, or an empty map for nil.
func orEmpty(m map[string][]float32) map[string][]float32 {
	if m == nil {
		return map[string][]float32{}
	}
	return m
}
