package optim

import (
	"fmt"
	"math"
)

// EMA warmup constants: timm ModelEmaV3's warmup_gamma and warmup_power. timm
// defaults the power to 2/3 (for runs of a million steps or more); 3/4 suits
// shorter runs (decay 0.999 at about 10k steps, 0.9999 at about 215k).
const (
	EMAWarmupGamma = 1.0
	EMAWarmupPower = 0.75
)

// EMA keeps an exponential moving average of every parameter, timm's
// ModelEmaV3 with update_after_step 0 and min_decay 0. It starts as a copy of
// the weights it is made from (timm's deepcopy of the model).
type EMA struct {
	decay  float64
	warmup bool
	w      *bank
}

// NewEMA returns an EMA whose weights start as a copy of the parameters'
// Values. decay must be in [0, 1]; warmup turns on ModelEmaV3's decay warmup
// (see [EMA.Decay]).
func NewEMA(decay float64, warmup bool, params []Param) (*EMA, error) {
	if !(decay >= 0 && decay <= 1) {
		return nil, fmt.Errorf("ema: decay must be in [0,1], got %g", decay)
	}
	for _, p := range params {
		if err := p.checkValue(); err != nil {
			return nil, fmt.Errorf("ema: %w", err)
		}
	}
	w, err := newBank(params, true)
	if err != nil {
		return nil, fmt.Errorf("ema: %w", err)
	}
	return &EMA{decay: decay, warmup: warmup, w: w}, nil
}

// Decay returns the decay used by the update after optimizer step `step`
// (1-based, as timm's num_updates). As in timm's ModelEmaV3.get_decay, with
// s = step − 1:
//
//	s ≤ 0:        0 (the first update copies the weights)
//	warmup off:   decay
//	warmup on:    min(decay, 1 − (1 + s/EMAWarmupGamma)^(−EMAWarmupPower))
func (e *EMA) Decay(step int) float64 {
	s := float64(step - 1)
	if s <= 0 {
		return 0
	}
	if !e.warmup {
		return e.decay
	}
	return min(e.decay, 1-math.Pow(1+s/EMAWarmupGamma, -EMAWarmupPower))
}

// Update moves every EMA weight towards the parameter's Value,
// ema ← lerp(ema, w, 1 − Decay(step)) computed in float32 as torch.lerp_ does.
// The parameters must be the ones the EMA was made from (any order); on a
// mismatch nothing is modified. The update runs on every core over fixed
// pieces; the result does not depend on the number of cores.
func (e *EMA) Update(params []Param, step int) error {
	for _, p := range params {
		if err := p.checkValue(); err != nil {
			return fmt.Errorf("ema step %d: %w", step, err)
		}
	}
	if err := e.w.match(params, "EMA"); err != nil {
		return fmt.Errorf("ema step %d: %w", step, err)
	}
	weight := float32(1 - e.Decay(step))
	dst := make([][]float32, len(params))
	for i, p := range params {
		dst[i] = e.w.slots[p.Name].data
	}
	forPieces(valueLens(params), func(pc piece) {
		lerp(dst[pc.p][pc.lo:pc.hi], params[pc.p].Value[pc.lo:pc.hi], weight)
	})
	return nil
}

// lerp sets a ← a + weight·(b − a) with torch's CPU formula, which switches
// to b − (b − a)·(1 − weight) for weight ≥ 0.5 so weight 1 gives b exactly.
func lerp(a, b []float32, weight float32) {
	b = b[:len(a)]
	if weight < 0.5 {
		for i := range a {
			a[i] += float32(weight * (b[i] - a[i]))
		}
		return
	}
	rest := 1 - weight
	for i := range a {
		a[i] = b[i] - float32((b[i]-a[i])*rest)
	}
}

// Weights returns a copy of the EMA weights keyed by parameter name: the
// weights to evaluate with, and the EMA's whole state for a checkpoint (decay
// and warmup come from the config, the step from the optimizer).
func (e *EMA) Weights() map[string][]float32 { return e.w.export() }

// LoadWeights replaces the EMA weights with a copy of w, saved by
// [EMA.Weights]. w must hold exactly the EMA's parameter names with their
// lengths.
func (e *EMA) LoadWeights(w map[string][]float32) error {
	have := make(map[string][]float32, len(e.w.slots))
	for name, s := range e.w.slots {
		have[name] = s.data
	}
	if err := checkSameNames(w, have, "saved EMA", "model"); err != nil {
		return fmt.Errorf("ema: %w", err)
	}
	e.w = bankFrom(w)
	return nil
}
