package optim

import (
	"fmt"
	"slices"
)

// SGD is torch.optim.SGD (dampening 0) over named float32 tensors, as timm's
// create_optimizer_v2 builds it: optim.opt sgd or nesterov is Nesterov
// momentum, momentum is plain (heavy-ball) momentum, with optim.momentum.
// Weight decay is torch's L2 term added to the gradient, skipped for the
// tensors [NoWeightDecay] reports; layer decay scales each tensor's
// learning rate by [LayerScale] as for [AdamW]. Its one slot is
// "momentum_buffer" (none when the momentum is 0).
type SGD struct {
	momentum    float64
	nesterov    bool
	weightDecay float64
	layerDecay  float64 // 0 or 1: off
	step        int
	state       slotBanks
}

// NewSGD returns an SGD with the momentum, weight_decay and layer_decay of
// c, with Nesterov momentum when nesterov is set; zero fields of c mean the
// defaults (Config.WithDefaults, momentum DefaultMomentum). c.Opt, when not
// one of the SGD names, is taken as sgd (nesterov) or momentum.
func NewSGD(c Config, nesterov bool) (*SGD, error) {
	if !c.Opt.usesMomentum() {
		c.Opt = OptMomentum
		if nesterov {
			c.Opt = OptSGD
		}
	}
	c = c.WithDefaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	mom := c.Momentum.Value()
	if nesterov && mom == 0 {
		return nil, fmt.Errorf("optim.momentum: Nesterov momentum needs a momentum > 0")
	}
	o := &SGD{momentum: mom, nesterov: nesterov, weightDecay: c.WeightDecay.Value()}
	if layerDecayOn(c.LayerDecay) {
		o.layerDecay = c.LayerDecay
	}
	o.state = slotBanks{opt: c.Opt}
	if mom != 0 {
		o.state.names = []string{"momentum_buffer"}
	}
	return o, nil
}

// Steps returns the number of steps taken.
func (o *SGD) Steps() int { return o.step }

// Groups returns the group of each parameter, as [AdamW.Groups] does.
func (o *SGD) Groups(params []Param) []Group {
	return groupsOf(params, o.weightDecay, o.layerDecay)
}

// Slots returns "momentum_buffer", or nothing when the momentum is 0.
func (o *SGD) Slots() []string { return slices.Clone(o.state.names) }

// SaveState returns a copy of the state.
func (o *SGD) SaveState() State { return State{Step: o.step, Slots: o.state.export()} }

// RestoreState replaces the state with a copy of st (see [Optimizer]).
func (o *SGD) RestoreState(st State) error {
	if err := o.state.load(st); err != nil {
		return err
	}
	o.step = st.Step
	return nil
}

// Step applies one SGD update with learning rate lr to every parameter
// that is not Frozen, in place on Value, reading Grad. Per parameter, with
// lr' = lr·LRScale and wd its group's weight decay, as torch 1.13's
// single-tensor SGD does (the buffer starts as a copy of the first d):
//
//	d ← g + wd·w
//	b ← d (first step), else b·μ + d
//	d ← d + μ·b (Nesterov), else b
//	w ← w − lr'·d
//
// On error nothing is modified.
func (o *SGD) Step(params []Param, lr float64) error {
	if err := checkLR("sgd", o.step+1, lr); err != nil {
		return err
	}
	if err := checkParams(params, o.layerDecay); err != nil {
		return fmt.Errorf("sgd step %d: %w", o.step+1, err)
	}
	if err := o.state.prepare(trainable(params)); err != nil {
		return fmt.Errorf("sgd step %d: %w", o.step+1, err)
	}
	ts := make([]tensorRef[float32], 0, len(params))
	layers := numLayers(params)
	for _, p := range params {
		if p.Frozen {
			continue
		}
		g := groupOf(p, layers, o.weightDecay, o.layerDecay)
		t := tensorRef[float32]{w: p.Value, g: p.Grad, group: g}
		if o.momentum != 0 {
			t.bufs = [][]float32{o.state.banks[0].slots[p.Name].data}
		}
		ts = append(ts, t)
	}
	sgdStep(ts, lr, o.momentum, o.nesterov, o.step == 0)
	o.step++
	return nil
}

// tensorRef is one tensor as an update rule sees it, in float32 (the
// training) or float64 (the tests against torch's float64 goldens): its
// weights, gradient, slot buffers and group.
type tensorRef[T float32 | float64] struct {
	w, g  []T
	bufs  [][]T // one per slot, in the optimizer's slot order
	group Group
}

// sgdStep is [SGD.Step]'s arithmetic on ts; first says the buffers are
// fresh (the first step).
func sgdStep[T float32 | float64](ts []tensorRef[T], lr, momentum float64, nesterov, first bool) {
	mu := T(momentum)
	for _, t := range ts {
		wd := T(t.group.WeightDecay)
		negLR := T(-lr * t.group.LRScale)
		var b []T
		if momentum != 0 {
			b = t.bufs[0][:len(t.w)]
		}
		g := t.g[:len(t.w)]
		for i, wi := range t.w {
			// Each product is rounded on its own (T(…)): no fused
			// multiply-add, as torch's two-step ops round.
			d := g[i]
			if wd != 0 {
				d += T(wd * wi)
			}
			if b != nil {
				if first {
					b[i] = d
				} else {
					b[i] = T(b[i]*mu) + d
				}
				if nesterov {
					d += T(mu * b[i])
				} else {
					d = b[i]
				}
			}
			t.w[i] = wi + T(negLR*d)
		}
	}
}
