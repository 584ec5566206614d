package optim

import (
	"fmt"
	"math"
	"slices"
)

// LambMaxGradNorm is the global gradient norm [Lamb] clips to before its
// update, timm's Lamb default max_grad_norm (on top of optim.clip_grad).
const LambMaxGradNorm = 1.0

// LambEps is optim.eps's default for optim.opt lamb, timm's Lamb default.
const LambEps = 1e-6

// Lamb is timm's Lamb (timm/optim/lamb.py, the NVLAMB variant) with timm's
// defaults: bias correction, grad_averaging, max_grad_norm
// [LambMaxGradNorm] (its own global-norm clipping), trust_clip and
// always_adapt off, weight decay added to the update (not decoupled), and
// the trust ratio ‖w‖/‖update‖ applied to the tensors with weight decay
// only. Betas and eps are optim.betas and optim.eps (eps default
// [LambEps]); the groups (no-decay tensors, layer decay) are [AdamW]'s. Its
// slots are "exp_avg" and "exp_avg_sq".
type Lamb struct {
	beta1, beta2 float64
	eps          float64
	weightDecay  float64
	layerDecay   float64 // 0 or 1: off
	step         int
	state        slotBanks
}

// lambSlots are Lamb's slots, named as in timm's state dict.
var lambSlots = []string{"exp_avg", "exp_avg_sq"}

// NewLamb returns a Lamb with the betas, eps, weight_decay and layer_decay
// of c; zero fields of c mean the defaults (Config.WithDefaults).
func NewLamb(c Config) (*Lamb, error) {
	c.Opt = OptLamb
	c = c.WithDefaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	o := &Lamb{beta1: c.Betas[0], beta2: c.Betas[1], eps: c.Eps, weightDecay: c.WeightDecay.Value(),
		state: slotBanks{opt: OptLamb, names: slices.Clone(lambSlots)}}
	if layerDecayOn(c.LayerDecay) {
		o.layerDecay = c.LayerDecay
	}
	return o, nil
}

// Steps returns the number of steps taken.
func (o *Lamb) Steps() int { return o.step }

// Groups returns the group of each parameter, as [AdamW.Groups] does.
func (o *Lamb) Groups(params []Param) []Group {
	return groupsOf(params, o.weightDecay, o.layerDecay)
}

// Slots returns "exp_avg" and "exp_avg_sq".
func (o *Lamb) Slots() []string { return slices.Clone(lambSlots) }

// SaveState returns a copy of the state.
func (o *Lamb) SaveState() State { return State{Step: o.step, Slots: o.state.export()} }

// RestoreState replaces the state with a copy of st (see [Optimizer]).
func (o *Lamb) RestoreState(st State) error {
	if err := o.state.load(st); err != nil {
		return err
	}
	o.step = st.Step
	return nil
}

// Step applies one Lamb update with learning rate lr to every parameter
// that is not Frozen, in place on Value, reading Grad (which it leaves as it
// is). With t the new step count, c = max(‖g‖/max_grad_norm, 1) over every
// trainable gradient, and per parameter lr' = lr·LRScale and wd its group's
// weight decay:
//
//	g ← g/c
//	m ← m·β1 + (1−β1)·g
//	v ← v·β2 + (1−β2)·g·g
//	u ← (m/(1−β1^t)) / (√v/√(1−β2^t) + eps) + wd·w
//	u ← u·‖w‖/‖u‖ when wd ≠ 0 (1 when either norm is 0)
//	w ← w − lr'·u
//
// Norms are summed in float64 in a fixed order, and the state is the two
// moments alone (no copy of the update). On error nothing is modified.
func (o *Lamb) Step(params []Param, lr float64) error {
	if err := checkLR("lamb", o.step+1, lr); err != nil {
		return err
	}
	if err := checkParams(params, o.layerDecay); err != nil {
		return fmt.Errorf("lamb step %d: %w", o.step+1, err)
	}
	if err := o.state.prepare(trainable(params)); err != nil {
		return fmt.Errorf("lamb step %d: %w", o.step+1, err)
	}
	ts := make([]tensorRef[float32], 0, len(params))
	layers := numLayers(params)
	for _, p := range params {
		if p.Frozen {
			continue
		}
		m, v := o.state.banks[0].slots[p.Name].data, o.state.banks[1].slots[p.Name].data
		ts = append(ts, tensorRef[float32]{w: p.Value, g: p.Grad, bufs: [][]float32{m, v},
			group: groupOf(p, layers, o.weightDecay, o.layerDecay)})
	}
	o.step++
	lambStep(ts, lr, o.step, o.beta1, o.beta2, o.eps)
	return nil
}

// lambStep is [Lamb.Step]'s arithmetic on ts at step t (1-based). It
// keeps no copy of a tensor's update: a first pass updates the moments and
// sums ‖update‖², a second computes each element's update again, with the
// same operations and so the same bits, and applies it.
func lambStep[T float32 | float64](ts []tensorRef[T], lr float64, t int, beta1, beta2, eps float64) {
	var sq float64 // Σ over tensors of ‖g‖², as torch's norm of the norms
	for _, r := range ts {
		n := norm2(r.g)
		sq += n * n
	}
	clip := math.Max(math.Sqrt(sq)/LambMaxGradNorm, 1)
	bc1 := 1 - math.Pow(beta1, float64(t))
	bc2Sqrt := math.Sqrt(1 - math.Pow(beta2, float64(t)))
	b1, b2, c1, c2 := T(beta1), T(beta2), T(1-beta1), T(1-beta2)
	tc, tbc1, tbc2, teps := T(clip), T(bc1), T(bc2Sqrt), T(eps)
	for _, r := range ts {
		wd := T(r.group.WeightDecay)
		m, v, g := r.bufs[0][:len(r.w)], r.bufs[1][:len(r.w)], r.g[:len(r.w)]
		// update is element i's update (before the trust ratio), from the
		// new moments and the weight before the step.
		update := func(i int) T {
			denom := T(T(math.Sqrt(float64(v[i])))/tbc2) + teps
			u := (m[i] / tbc1) / denom
			if wd != 0 {
				u += T(wd * r.w[i])
			}
			return u
		}
		var usq float64
		for i := range r.w {
			gi := g[i] / tc
			m[i] = T(m[i]*b1) + T(gi*c1)
			v[i] = T(v[i]*b2) + T(T(gi*gi)*c2)
			if wd != 0 {
				u := float64(update(i))
				usq += u * u
			}
		}
		trust := T(1)
		if wd != 0 {
			if wn, un := norm2(r.w), math.Sqrt(usq); wn > 0 && un > 0 {
				trust = T(wn / un)
			}
		}
		negLR := T(-lr * r.group.LRScale)
		for i := range r.w {
			u := update(i)
			if wd != 0 {
				u = T(u * trust)
			}
			r.w[i] += T(negLR * u)
		}
	}
}

// norm2 is the L2 norm of x, summed in float64 in order.
func norm2[T float32 | float64](x []T) float64 {
	var s float64
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s)
}
