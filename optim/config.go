package optim

import (
	"fmt"
	"math"

	"github.com/vitgo/vit/internal/cfgerr"
	"github.com/vitgo/vit/internal/enum"
	"github.com/vitgo/vit/internal/optional"
)

// OptName names the optimizer, the value of Config.Opt: a row of the
// optimizer table (see [New]). The zero value "" means OptAdamW.
type OptName string

// The optimizers, values of Config.Opt, named as timm's --opt names them.
const (
	OptAdamW    OptName = "adamw"    // torch.optim.AdamW ([AdamW])
	OptSGD      OptName = "sgd"      // torch.optim.SGD with Nesterov momentum ([SGD]), as timm's "sgd"
	OptNesterov OptName = "nesterov" // the same as OptSGD
	OptMomentum OptName = "momentum" // torch.optim.SGD with plain (heavy-ball) momentum
	OptLamb     OptName = "lamb"     // timm's Lamb ([Lamb])
)

// Validate reports whether o is a known optimizer ("" = adamw).
func (o OptName) Validate() error {
	return enum.Check(o, optNames()...)
}

// usesMomentum reports whether the optimizer reads Config.Momentum.
func (o OptName) usesMomentum() bool {
	return o == OptSGD || o == OptNesterov || o == OptMomentum
}

// DefaultMomentum is optim.momentum's default, timm's and torch's usual 0.9.
const DefaultMomentum = 0.9

// Sched names a learning-rate schedule, the value of Config.Sched. The zero
// value "" means SchedCosine.
type Sched string

// Validate reports whether s is a known schedule ("" = cosine).
func (s Sched) Validate() error {
	return enum.Check(s, SchedCosine, SchedConstant, SchedStep)
}

// MaxEpochsKey bounds the keys counted in epochs (warmup_epochs,
// decay_epochs): a million epochs is beyond any run.
const MaxEpochsKey = 1e6

// Config is the "optim" section of a run's YAML config. The YAML parser
// decodes it over [DefaultConfig], so absent keys keep their defaults and
// every present value is taken literally.
//
// In Go the zero value is valid and means DefaultConfig: every zero field
// means its default (see [Config.WithDefaults]). Where 0 is itself a
// setting that differs from the default (weight_decay, warmup_epochs,
// warmup_lr, min_lr, clip_grad), the field is an [optional.Float]: unset
// means the default, and optional.FloatOf(0) (or an explicit 0 in YAML)
// means 0. LayerDecay's default is 0 (off), so it stays a plain float64.
type Config struct {
	Opt          OptName        `yaml:"opt"`           // optimizer: adamw, sgd, nesterov, momentum or lamb; "" = adamw
	LR           float64        `yaml:"lr"`            // base (peak) learning rate; 0 = 1e-3
	WeightDecay  optional.Float `yaml:"weight_decay"`  // decoupled weight decay, not applied to NoWeightDecay tensors; default 0.05, 0 = none
	Betas        []float64      `yaml:"betas"`         // AdamW β1, β2; nil = [0.9, 0.999]
	Eps          float64        `yaml:"eps"`           // AdamW ε; 0 = 1e-8
	Sched        Sched          `yaml:"sched"`         // SchedCosine, SchedConstant or SchedStep; "" = cosine
	WarmupEpochs optional.Float `yaml:"warmup_epochs"` // linear warmup length in epochs, fractional allowed; default 1, 0 = none
	WarmupLR     optional.Float `yaml:"warmup_lr"`     // learning rate at the first warmup step; default 1e-6
	MinLR        optional.Float `yaml:"min_lr"`        // cosine: final learning rate; default 1e-5
	DecayEpochs  float64        `yaml:"decay_epochs"`  // step: epochs between decays; 0 = 90
	DecayRate    float64        `yaml:"decay_rate"`    // step: factor per decay; 0 = 0.1
	ClipGrad     optional.Float `yaml:"clip_grad"`     // max global gradient L2 norm; default 1, 0 = off
	LayerDecay   float64        `yaml:"layer_decay"`   // layer-wise lr decay factor; 0 or 1 = off
	EMA          bool           `yaml:"ema"`           // keep an EMA of the weights
	EMADecay     float64        `yaml:"ema_decay"`     // EMA decay per step, in (0, 1]; 0 = 0.9998
	EMAWarmup    bool           `yaml:"ema_warmup"`    // timm ModelEmaV3 decay warmup
	// Momentum is SGD's momentum factor (sgd, nesterov, momentum), >= 0;
	// default DefaultMomentum. Setting it for another optimizer is an
	// error; for them it is left out of a resolved config.
	Momentum optional.Float `yaml:"momentum,omitempty"`
}

// DefaultConfig returns the documented defaults: AdamW lr 1e-3, weight decay
// 0.05, betas [0.9, 0.999], eps 1e-8; one warmup epoch from 1e-6, then cosine
// to 1e-5 (step schedule: ×0.1 every 90 epochs, timm's defaults); gradient
// clipping at norm 1; no layer decay; EMA off with decay 0.9998, no warmup.
func DefaultConfig() Config {
	return Config{
		Opt: OptAdamW, LR: 1e-3, WeightDecay: optional.FloatOf(0.05), Betas: []float64{0.9, 0.999}, Eps: 1e-8,
		Sched: SchedCosine, WarmupEpochs: optional.FloatOf(1), WarmupLR: optional.FloatOf(1e-6), MinLR: optional.FloatOf(1e-5),
		DecayEpochs: 90, DecayRate: 0.1,
		ClipGrad: optional.FloatOf(1.0), LayerDecay: 0,
		EMA: false, EMADecay: 0.9998, EMAWarmup: false,
	}
}

// WithDefaults returns c with every zero field replaced by DefaultConfig's
// value: Opt, LR, Betas, Eps, Sched, DecayEpochs, DecayRate and EMADecay
// when zero, and the optional fields (WeightDecay, WarmupEpochs, WarmupLR,
// MinLR, ClipGrad) when unset; an optional field set to 0 stays 0.
// (LayerDecay, EMA and EMAWarmup default to their zero.) Momentum, when
// unset, becomes DefaultMomentum for the SGD optimizers only; Eps defaults
// to LambEps for lamb. New, NewAdamW
// and Schedule call it.
func (c Config) WithDefaults() Config {
	d := DefaultConfig()
	if c.Opt == "" {
		c.Opt = d.Opt
	}
	if c.Sched == "" {
		c.Sched = d.Sched
	}
	if c.Betas == nil {
		c.Betas = d.Betas
	}
	if c.Eps == 0 && c.Opt == OptLamb {
		c.Eps = LambEps
	}
	for _, f := range []struct{ v, def *float64 }{
		{&c.LR, &d.LR}, {&c.Eps, &d.Eps}, {&c.DecayEpochs, &d.DecayEpochs}, {&c.DecayRate, &d.DecayRate}, {&c.EMADecay, &d.EMADecay},
	} {
		if *f.v == 0 {
			*f.v = *f.def
		}
	}
	c.WeightDecay = c.WeightDecay.Or(d.WeightDecay)
	c.WarmupEpochs = c.WarmupEpochs.Or(d.WarmupEpochs)
	c.WarmupLR = c.WarmupLR.Or(d.WarmupLR)
	c.MinLR = c.MinLR.Or(d.MinLR)
	c.ClipGrad = c.ClipGrad.Or(d.ClipGrad)
	if c.Opt.usesMomentum() {
		c.Momentum = c.Momentum.Or(optional.FloatOf(DefaultMomentum))
	}
	return c
}

// Validate reports every invalid key, each a *cfgerr.Error naming it as
// optim.key. Zero fields that mean a default are valid.
func (c Config) Validate() error {
	c = c.WithDefaults()
	var errs cfgerr.List
	bad := func(key, want string, got any) { errs.Add("optim."+key, "must be %s, got %v", want, got) }
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	if err := c.Opt.Validate(); err != nil {
		errs.Add("optim.opt", "%w", err)
	}
	wd, warmEpochs, warmLR, minLR, clip := c.WeightDecay.Value(), c.WarmupEpochs.Value(), c.WarmupLR.Value(), c.MinLR.Value(), c.ClipGrad.Value()
	if !(c.LR > 0) || !finite(c.LR) {
		bad("lr", "> 0", c.LR)
	}
	if !(wd >= 0) || !finite(wd) {
		bad("weight_decay", ">= 0", wd)
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
	} else if !cfgerr.PositiveNormal32(c.Eps) { // the update divides by √v + ε in float32
		bad("eps", "normal in float32 (>= 1.2e-38, not 0 or subnormal once rounded)", c.Eps)
	}
	if err := c.Sched.Validate(); err != nil {
		errs.Add("optim.sched", "%w", err)
	}
	if !(warmEpochs >= 0 && warmEpochs <= MaxEpochsKey) {
		bad("warmup_epochs", fmt.Sprintf("in [0, %g]", float64(MaxEpochsKey)), warmEpochs)
	}
	if !(warmLR >= 0) || !finite(warmLR) {
		bad("warmup_lr", ">= 0", warmLR)
	}
	if !(minLR >= 0) || !finite(minLR) {
		bad("min_lr", ">= 0", minLR)
	} else if c.Sched == SchedCosine && c.LR > 0 && minLR > c.LR {
		bad("min_lr", fmt.Sprintf("<= optim.lr (%v) for the cosine schedule", c.LR), minLR)
	}
	if c.Sched == SchedStep {
		if !(c.DecayEpochs > 0 && c.DecayEpochs <= MaxEpochsKey) {
			bad("decay_epochs", fmt.Sprintf("in (0, %g] for the step schedule", float64(MaxEpochsKey)), c.DecayEpochs)
		}
		if !(c.DecayRate > 0) || !finite(c.DecayRate) {
			bad("decay_rate", "> 0 for the step schedule", c.DecayRate)
		}
	}
	if !(clip >= 0) || !finite(clip) {
		bad("clip_grad", ">= 0 (0 = off)", clip)
	}
	if !(c.LayerDecay >= 0 && c.LayerDecay <= 1) {
		bad("layer_decay", "in [0,1] (0 or 1 = off)", c.LayerDecay)
	}
	if c.Momentum.IsSet() && !c.Opt.usesMomentum() {
		bad("momentum", "left out for optim.opt "+string(c.Opt)+" (only sgd, nesterov and momentum use it)", c.Momentum.Value())
	} else if mom := c.Momentum.Value(); !(mom >= 0) || !finite(mom) {
		bad("momentum", ">= 0", mom)
	} else if mom == 0 && (c.Opt == OptSGD || c.Opt == OptNesterov) {
		bad("momentum", fmt.Sprintf("> 0 for Nesterov momentum (optim.opt %s; plain SGD is optim.opt momentum with momentum 0)", c.Opt), mom)
	}
	if !(c.EMADecay > 0 && c.EMADecay <= 1) {
		bad("ema_decay", "in (0,1]", c.EMADecay)
	}
	return errs.Err()
}
