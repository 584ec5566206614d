package optim

import "math"

// Schedule names, the values of Config.Sched.
const (
	SchedCosine   Sched = "cosine"   // warmup, then cosine from BaseLR to MinLR over the remaining steps
	SchedConstant Sched = "constant" // warmup, then BaseLR
	SchedStep     Sched = "step"     // warmup, then BaseLR·DecayRate^⌊t / decay steps⌋
)

// Schedule gives the learning rate of every step, set before each update. It
// is a pure function of the step, so a resumed run needs only the step count.
type Schedule struct {
	Kind         Sched   // SchedCosine, SchedConstant or SchedStep
	BaseLR       float64 // base learning rate, reached at the end of warmup
	WarmupLR     float64 // learning rate of step 0 when there is a warmup
	WarmupEpochs float64 // warmup length in epochs, fractional allowed; 0 = none
	MinLR        float64 // cosine: the learning rate at and after the last step
	DecayEpochs  float64 // step: epochs between two decays
	DecayRate    float64 // step: factor applied at every decay
}

// Schedule returns the learning-rate schedule of the config.
func (c Config) Schedule() Schedule {
	c = c.WithDefaults()
	return Schedule{
		Kind: c.Sched, BaseLR: c.LR, WarmupLR: c.WarmupLR.Value(), WarmupEpochs: c.WarmupEpochs.Value(),
		MinLR: c.MinLR.Value(), DecayEpochs: c.DecayEpochs, DecayRate: c.DecayRate,
	}
}

// WarmupSteps returns the warmup length in steps, WarmupEpochs·stepsPerEpoch
// rounded half to even (as the PyTorch peer's int(round(…)) does).
func (s Schedule) WarmupSteps(stepsPerEpoch int) int {
	return epochsToSteps(s.WarmupEpochs, stepsPerEpoch)
}

// LR returns the learning rate of step t (0-based: the update about to be
// made), with W = [Schedule.WarmupSteps] and T = totalSteps:
//
//	t < W:  WarmupLR + (BaseLR − WarmupLR)·t/W            (timm's linear warmup: step 0 uses WarmupLR)
//	cosine: MinLR + ½(BaseLR − MinLR)(1 + cos(π·(t−W)/(T−W))), MinLR once t ≥ T
//	constant: BaseLR
//	step:   BaseLR·DecayRate^⌊t/D⌋, D = DecayEpochs·stepsPerEpoch rounded (≥ 1), t counted from 0 as timm does
//
// This is timm's CosineLRScheduler per step (t_in_epochs=False) with the
// cosine spanning the steps after warmup (warmup_prefix=True, one cycle), and
// its StepLRScheduler per step. It differs from the PyTorch peer's lr_at only
// in warmup, which there is BaseLR·(t+1)/W. LR returns NaN, which [AdamW.Step]
// rejects, for an unknown Kind or stepsPerEpoch < 1.
func (s Schedule) LR(t, stepsPerEpoch, totalSteps int) float64 {
	if stepsPerEpoch < 1 {
		return math.NaN()
	}
	if w := s.WarmupSteps(stepsPerEpoch); t < w {
		return s.WarmupLR + (s.BaseLR-s.WarmupLR)*float64(t)/float64(w)
	}
	switch s.Kind {
	case SchedCosine:
		w := s.WarmupSteps(stepsPerEpoch)
		if t >= totalSteps {
			return s.MinLR
		}
		progress := float64(t-w) / float64(totalSteps-w)
		return s.MinLR + 0.5*(s.BaseLR-s.MinLR)*(1+math.Cos(math.Pi*progress))
	case SchedConstant:
		return s.BaseLR
	case SchedStep:
		d := max(epochsToSteps(s.DecayEpochs, stepsPerEpoch), 1)
		return s.BaseLR * math.Pow(s.DecayRate, float64(t/d))
	}
	return math.NaN()
}

// epochsToSteps converts a (fractional) number of epochs to whole steps,
// rounding half to even.
func epochsToSteps(epochs float64, stepsPerEpoch int) int {
	return int(math.RoundToEven(epochs * float64(stepsPerEpoch)))
}
