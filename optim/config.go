package optim

import (
	"errors"
	"fmt"
	"math"
)

// OptAdamW is the only optimizer, the value of Config.Opt.
const OptAdamW = "adamw"

// Config is the "optim" section of a run's YAML config. Decode over
// [DefaultConfig] so absent keys keep their defaults.
type Config struct {
	Opt          string    `yaml:"opt"`           // optimizer: "adamw" (the only value for now)
	LR           float64   `yaml:"lr"`            // base (peak) learning rate
	WeightDecay  float64   `yaml:"weight_decay"`  // decoupled weight decay, not applied to NoWeightDecay tensors
	Betas        []float64 `yaml:"betas"`         // AdamW β1, β2
	Eps          float64   `yaml:"eps"`           // AdamW ε
	Sched        string    `yaml:"sched"`         // SchedCosine, SchedConstant or SchedStep
	WarmupEpochs float64   `yaml:"warmup_epochs"` // linear warmup length in epochs, fractional allowed; 0 = none
	WarmupLR     float64   `yaml:"warmup_lr"`     // learning rate at the first warmup step
	MinLR        float64   `yaml:"min_lr"`        // cosine: final learning rate
	DecayEpochs  float64   `yaml:"decay_epochs"`  // step: epochs between decays
	DecayRate    float64   `yaml:"decay_rate"`    // step: factor per decay
	ClipGrad     float64   `yaml:"clip_grad"`     // max global gradient L2 norm; 0 = off
	LayerDecay   float64   `yaml:"layer_decay"`   // layer-wise lr decay factor; 0 or 1 = off
	EMA          bool      `yaml:"ema"`           // keep an EMA of the weights
	EMADecay     float64   `yaml:"ema_decay"`     // EMA decay per step
	EMAWarmup    bool      `yaml:"ema_warmup"`    // timm ModelEmaV3 decay warmup
}

// DefaultConfig returns the documented defaults: AdamW lr 1e-3, weight decay
// 0.05, betas [0.9, 0.999], eps 1e-8; one warmup epoch from 1e-6, then cosine
// to 1e-5 (step schedule: ×0.1 every 90 epochs, timm's defaults); gradient
// clipping at norm 1; no layer decay; EMA off with decay 0.9998, no warmup.
func DefaultConfig() Config {
	return Config{
		Opt: OptAdamW, LR: 1e-3, WeightDecay: 0.05, Betas: []float64{0.9, 0.999}, Eps: 1e-8,
		Sched: SchedCosine, WarmupEpochs: 1, WarmupLR: 1e-6, MinLR: 1e-5,
		DecayEpochs: 90, DecayRate: 0.1,
		ClipGrad: 1.0, LayerDecay: 0,
		EMA: false, EMADecay: 0.9998, EMAWarmup: false,
	}
}

// Validate reports every invalid key, each message naming it as optim.key.
func (c Config) Validate() error {
	var errs []error
	bad := func(key, want string, got any) {
		errs = append(errs, fmt.Errorf("optim.%s: must be %s, got %v", key, want, got))
	}
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	if c.Opt != OptAdamW {
		bad("opt", `"adamw"`, fmt.Sprintf("%q", c.Opt))
	}
	if !(c.LR > 0) || !finite(c.LR) {
		bad("lr", "> 0", c.LR)
	}
	if !(c.WeightDecay >= 0) || !finite(c.WeightDecay) {
		bad("weight_decay", ">= 0", c.WeightDecay)
	}
	if len(c.Betas) != 2 {
		bad("betas", "two numbers [beta1, beta2]", c.Betas)
	} else {
		for i, b := range c.Betas {
			if !(b >= 0 && b < 1) {
				bad(fmt.Sprintf("betas[%d]", i), "in [0,1)", b)
			}
		}
	}
	if !(c.Eps > 0) || !finite(c.Eps) {
		bad("eps", "> 0", c.Eps)
	}
	switch c.Sched {
	case SchedCosine, SchedConstant, SchedStep:
	default:
		bad("sched", `one of "cosine", "constant", "step"`, fmt.Sprintf("%q", c.Sched))
	}
	if !(c.WarmupEpochs >= 0) || !finite(c.WarmupEpochs) {
		bad("warmup_epochs", ">= 0", c.WarmupEpochs)
	}
	if !(c.WarmupLR >= 0) || !finite(c.WarmupLR) {
		bad("warmup_lr", ">= 0", c.WarmupLR)
	}
	if !(c.MinLR >= 0) || !finite(c.MinLR) {
		bad("min_lr", ">= 0", c.MinLR)
	} else if c.Sched == SchedCosine && c.LR > 0 && c.MinLR > c.LR {
		bad("min_lr", fmt.Sprintf("<= optim.lr (%v) for the cosine schedule", c.LR), c.MinLR)
	}
	if c.Sched == SchedStep {
		if !(c.DecayEpochs > 0) || !finite(c.DecayEpochs) {
			bad("decay_epochs", "> 0 for the step schedule", c.DecayEpochs)
		}
		if !(c.DecayRate > 0) || !finite(c.DecayRate) {
			bad("decay_rate", "> 0 for the step schedule", c.DecayRate)
		}
	}
	if !(c.ClipGrad >= 0) || !finite(c.ClipGrad) {
		bad("clip_grad", ">= 0 (0 = off)", c.ClipGrad)
	}
	if !(c.LayerDecay >= 0 && c.LayerDecay <= 1) {
		bad("layer_decay", "in [0,1] (0 or 1 = off)", c.LayerDecay)
	}
	if !(c.EMADecay >= 0 && c.EMADecay <= 1) {
		bad("ema_decay", "in [0,1]", c.EMADecay)
	}
	return errors.Join(errs...)
}
