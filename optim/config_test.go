package optim

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/vitgo/vit/internal/optional"
)

func TestDefaultConfigValid(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("DefaultConfig().Validate() = %v", err)
	}
}

// TestConfigYAML decodes over the defaults: absent keys keep them, every
// documented key is spelled as the tags say.
func TestConfigYAML(t *testing.T) {
	c := DefaultConfig()
	src := `
lr: 5.0e-4
betas: [0.9, 0.95]
sched: step
warmup_epochs: 0.5
decay_epochs: 30
decay_rate: 0.5
layer_decay: 0.65
ema: true
ema_warmup: true
`
	if err := yaml.Unmarshal([]byte(src), &c); err != nil {
		t.Fatal(err)
	}
	want := DefaultConfig()
	want.LR, want.Betas, want.Sched = 5e-4, []float64{0.9, 0.95}, SchedStep
	want.WarmupEpochs.Set(0.5)
	want.DecayEpochs, want.DecayRate, want.LayerDecay, want.EMA, want.EMAWarmup = 30, 0.5, 0.65, true, true
	if !reflect.DeepEqual(c, want) {
		t.Errorf("decoded %+v\nwant    %+v", c, want)
	}
	out, err := yaml.Marshal(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"opt", "lr", "weight_decay", "betas", "eps", "sched", "warmup_epochs", "warmup_lr",
		"min_lr", "decay_epochs", "decay_rate", "clip_grad", "layer_decay", "ema", "ema_decay", "ema_warmup"} {
		if !strings.Contains(string(out), "\n"+key+":") && !strings.HasPrefix(string(out), key+":") {
			t.Errorf("key %s missing from the marshalled defaults:\n%s", key, out)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name   string
		edit   func(*Config)
		errHas string
	}{
		{"opt", func(c *Config) { c.Opt = "adam" }, `optim.opt: must be one of "adamw", "sgd", "nesterov", "momentum", "lamb", got "adam"`},
		{"momentum negative", func(c *Config) { c.Opt, c.Momentum = OptMomentum, optional.FloatOf(-0.1) }, "optim.momentum: must be >= 0, got -0.1"},
		{"momentum NaN", func(c *Config) { c.Opt, c.Momentum = OptSGD, optional.FloatOf(math.NaN()) }, "optim.momentum: must be >= 0, got NaN"},
		{"momentum for adamw", func(c *Config) { c.Momentum = optional.FloatOf(0.9) }, "optim.momentum: must be left out for optim.opt adamw (only sgd, nesterov and momentum use it), got 0.9"},
		{"momentum for lamb", func(c *Config) { c.Opt, c.Momentum = OptLamb, optional.FloatOf(0) }, "optim.momentum: must be left out for optim.opt lamb"},
		{"nesterov momentum 0", func(c *Config) { c.Opt, c.Momentum = OptNesterov, optional.FloatOf(0) }, "optim.momentum: must be > 0 for Nesterov momentum"},
		{"lr negative", func(c *Config) { c.LR = -1 }, "optim.lr: must be > 0, got -1"},
		{"lr NaN", func(c *Config) { c.LR = math.NaN() }, "optim.lr: must be > 0, got NaN"},
		{"weight_decay", func(c *Config) { c.WeightDecay.Set(-0.1) }, "optim.weight_decay: must be >= 0, got -0.1"},
		{"betas count", func(c *Config) { c.Betas = []float64{0.9} }, "optim.betas: must be two numbers [beta1, beta2], got [0.9]"},
		{"beta2", func(c *Config) { c.Betas = []float64{0.9, 1} }, "optim.betas[1]: must be in [0,1), got 1"},
		{"eps", func(c *Config) { c.Eps = -1 }, "optim.eps: must be > 0, got -1"},
		{"eps 0 in float32", func(c *Config) { c.Eps = 1e-300 }, "optim.eps: must be normal in float32"},
		{"eps subnormal in float32", func(c *Config) { c.Eps = 1e-40 }, "optim.eps: must be normal in float32"},
		{"sched", func(c *Config) { c.Sched = "linear" }, `optim.sched: must be one of "cosine", "constant", "step", got "linear"`},
		{"warmup_epochs", func(c *Config) { c.WarmupEpochs.Set(-1) }, "optim.warmup_epochs: must be in [0, 1e+06], got -1"},
		{"warmup_lr", func(c *Config) { c.WarmupLR.Set(math.Inf(1)) }, "optim.warmup_lr: must be >= 0, got +Inf"},
		{"min_lr", func(c *Config) { c.MinLR.Set(-1e-5) }, "optim.min_lr: must be >= 0, got -1e-05"},
		{"min_lr above lr", func(c *Config) { c.MinLR.Set(0.1) }, "optim.min_lr: must be <= optim.lr (0.001) for the cosine schedule, got 0.1"},
		{"decay_epochs", func(c *Config) { c.Sched, c.DecayEpochs = SchedStep, -1 }, "optim.decay_epochs: must be in (0, 1e+06] for the step schedule, got -1"},
		{"warmup_epochs 1e9", func(c *Config) { c.WarmupEpochs.Set(1e9) }, "optim.warmup_epochs: must be in [0, 1e+06], got 1e+09"},
		{"decay_rate", func(c *Config) { c.Sched, c.DecayRate = SchedStep, -2 }, "optim.decay_rate: must be > 0 for the step schedule, got -2"},
		{"clip_grad", func(c *Config) { c.ClipGrad.Set(-1) }, "optim.clip_grad: must be >= 0 (0 = off), got -1"},
		{"layer_decay", func(c *Config) { c.LayerDecay = 1.2 }, "optim.layer_decay: must be in [0,1] (0 or 1 = off), got 1.2"},
		{"ema_decay", func(c *Config) { c.EMADecay = 2 }, "optim.ema_decay: must be in (0,1], got 2"},
	}
	for _, tc := range tests {
		c := DefaultConfig()
		tc.edit(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.errHas) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.errHas)
		}
	}
	// Every problem is reported, one per line.
	c := DefaultConfig()
	c.LR, c.Eps = -1, -1
	if err := c.Validate(); err == nil || strings.Count(err.Error(), "\n") != 1 {
		t.Errorf("two bad keys: got %v, want two lines", err)
	}
	// The step schedule's keys are not checked for other schedules.
	c = DefaultConfig()
	c.DecayEpochs = 0
	if err := c.Validate(); err != nil {
		t.Errorf("decay_epochs 0 with the cosine schedule: %v", err)
	}
}

// TestZeroConfig: the zero Config is valid and resolves to DefaultConfig,
// the optional fields (weight_decay, warmup_*, min_lr, clip_grad) included;
// an optional field set to 0 stays 0 rather than becoming its default.
func TestZeroConfig(t *testing.T) {
	if err := (Config{}).Validate(); err != nil {
		t.Fatalf("Config{}.Validate() = %v", err)
	}
	if _, err := NewAdamW(Config{}); err != nil {
		t.Errorf("NewAdamW(Config{}) = %v", err)
	}
	if got, d := (Config{}).WithDefaults(), DefaultConfig(); !reflect.DeepEqual(got, d) {
		t.Errorf("Config{}.WithDefaults() = %+v\nwant %+v", got, d)
	}
	var off Config
	for _, f := range []*optional.Float{&off.WeightDecay, &off.WarmupEpochs, &off.WarmupLR, &off.MinLR, &off.ClipGrad} {
		f.Set(0)
	}
	got := off.WithDefaults()
	for i, f := range []optional.Float{got.WeightDecay, got.WarmupEpochs, got.WarmupLR, got.MinLR, got.ClipGrad} {
		if f != optional.FloatOf(0) {
			t.Errorf("optional field %d set to 0 resolved to %v", i, f)
		}
	}
	d := DefaultConfig()
	if s := (Config{}).Schedule(); s.Kind != SchedCosine || s.BaseLR != d.LR {
		t.Errorf("Config{}.Schedule() = %+v", s)
	}
	// Typed options validate themselves.
	if Sched("linear").Validate() == nil || OptName("adam").Validate() == nil || OptLamb.Validate() != nil || SchedStep.Validate() != nil {
		t.Error("Sched/OptName Validate")
	}
}
