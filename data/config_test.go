package data

import (
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/vitgo/vit/internal/cfgerr"
	"github.com/vitgo/vit/internal/optional"
)

func TestDefaultsValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Error(err)
	}
	if err := DefaultAugmentConfig().Validate(); err != nil {
		t.Error(err)
	}
	if err := DefaultMixupConfig().Validate(); err != nil {
		t.Error(err)
	}
	d := DefaultConfig()
	if d.Name != NameMNIST || d.Prefetch != 4 || d.Workers != 0 || d.Root != "" {
		t.Errorf("data defaults %+v", d)
	}
	m := DefaultMixupConfig()
	if m.Prob != optional.FloatOf(1) || m.SwitchProb != optional.FloatOf(0.5) || m.Mode != MixBatch || m.CorrectLam != optional.BoolOf(true) || m.Active() || m.LabelSmoothing != 0 {
		t.Errorf("mixup defaults %+v", m)
	}
	a := DefaultAugmentConfig()
	if a.HFlip != 0 || a.CropPadding != 0 || a.RandAugment != "" || a.REProb != 0 || a.Interpolation != InterpBilinear {
		t.Errorf("augment defaults %+v", a)
	}
}

func TestConfigValidateNamesKey(t *testing.T) {
	type validator interface{ Validate() error }
	data := func(f func(*Config)) validator { c := DefaultConfig(); f(&c); return c }
	aug := func(f func(*AugmentConfig)) validator { c := DefaultAugmentConfig(); f(&c); return c }
	mix := func(f func(*MixupConfig)) validator { c := DefaultMixupConfig(); f(&c); return c }
	cases := []struct {
		v    validator
		want string
	}{
		{data(func(c *Config) { c.Name = "imagenet" }), "data.name"},
		{data(func(c *Config) { c.Name = NameCIFAR10 }), "data.root"},
		{data(func(c *Config) { c.Name = NameFolder }), "data.root"},
		{data(func(c *Config) { c.LimitTrain = -1 }), "data.limit_train"},
		{data(func(c *Config) { c.LimitVal = -2 }), "data.limit_val"},
		{data(func(c *Config) { c.Workers = -1 }), "data.workers"},
		{data(func(c *Config) { c.Workers = 1e6 }), "data.workers"},
		{data(func(c *Config) { c.Prefetch = -1 }), "data.prefetch"},
		{data(func(c *Config) { c.Prefetch = 1e9 }), "data.prefetch"},
		{data(func(c *Config) { c.Mean = []float64{0.5} }), "data.std"},
		{data(func(c *Config) { c.Mean, c.Std = []float64{0.5, 0.5}, []float64{1, 1} }), "data.mean"},
		{data(func(c *Config) { c.Mean, c.Std = []float64{0.5}, []float64{0} }), "data.std[0]"},
		{data(func(c *Config) { c.Mean, c.Std = []float64{math.NaN()}, []float64{1} }), "data.mean[0]"},
		// finite in float64, not in the float32 that normalises: +Inf std made every input 0
		{data(func(c *Config) { c.Mean, c.Std = []float64{0.5}, []float64{1e39} }), "data.std[0]"},
		{data(func(c *Config) { c.Mean, c.Std = []float64{0.5}, []float64{1e-50} }), "data.std[0]"},
		// positive in float32, but subnormal: NaN at step 0
		{data(func(c *Config) { c.Mean, c.Std = []float64{0.5}, []float64{1e-40} }), "data.std[0]"},
		// each finite and normal, their quotient not: every input +Inf
		{data(func(c *Config) { c.Mean, c.Std = []float64{3e38}, []float64{1e-37} }), "data.std[0]"},
		{data(func(c *Config) { c.Mean, c.Std = []float64{-1e39}, []float64{1} }), "data.mean[0]"},
		{aug(func(c *AugmentConfig) { c.CropPadding = -1 }), "augment.crop_padding"},
		{aug(func(c *AugmentConfig) { c.CropPadding = 1e6 }), "augment.crop_padding"},
		{aug(func(c *AugmentConfig) { c.HFlip = 1.5 }), "augment.hflip"},
		{aug(func(c *AugmentConfig) { c.REProb = -0.1 }), "augment.re_prob"},
		{aug(func(c *AugmentConfig) { c.RandAugment = "auto-m9" }), "augment.rand_augment"},
		{aug(func(c *AugmentConfig) { c.Interpolation = "bicubic" }), "augment.interpolation"},
		{mix(func(c *MixupConfig) { c.MixupAlpha = -1 }), "mixup.mixup_alpha"},
		{mix(func(c *MixupConfig) { c.CutmixAlpha = math.Inf(1) }), "mixup.cutmix_alpha"},
		{mix(func(c *MixupConfig) { c.CutmixMinMax = []float64{0.3} }), "mixup.cutmix_minmax"},
		{mix(func(c *MixupConfig) { c.CutmixMinMax = []float64{0.8, 0.3} }), "mixup.cutmix_minmax"},
		{mix(func(c *MixupConfig) { c.Prob.Set(1.5) }), "mixup.prob"},
		{mix(func(c *MixupConfig) { c.SwitchProb.Set(math.NaN()) }), "mixup.switch_prob"},
		{mix(func(c *MixupConfig) { c.Mode = "random" }), "mixup.mode"},
		{mix(func(c *MixupConfig) { c.LabelSmoothing = 1 }), "mixup.label_smoothing"},
	}
	for _, c := range cases {
		err := c.v.Validate()
		var ce *cfgerr.Error
		if !errors.As(err, &ce) || ce.Key != c.want {
			t.Errorf("%+v: error %v, want a *cfgerr.Error for %q", c.v, err, c.want)
		}
	}
	ok := []validator{
		data(func(c *Config) { c.Name, c.Root = NameCIFAR10, "/x" }),
		data(func(c *Config) { c.Mean, c.Std = []float64{0.1, 0.2, 0.3}, []float64{1, 1, 1} }),
		aug(func(c *AugmentConfig) { c.Interpolation, c.RandAugment = InterpBilinearAA, "rand-m9-mstd0.5-inc1" }),
		mix(func(c *MixupConfig) { c.CutmixMinMax, c.Mode = []float64{0.2, 0.8}, MixElem }),
	}
	for _, v := range ok {
		if err := v.Validate(); err != nil {
			t.Errorf("%+v: %v", v, err)
		}
	}
}

// TestZeroSectionsAreDefaults: the zero value of each section is valid and
// resolves to the defaults (a zero AugmentConfig included).
func TestZeroSectionsAreDefaults(t *testing.T) {
	if err := (Config{}).Validate(); err != nil {
		t.Errorf("Config{}: %v", err)
	}
	if got := (Config{}).WithDefaults(); !reflect.DeepEqual(got, DefaultConfig()) {
		t.Errorf("Config{}.WithDefaults() = %+v, want %+v", got, DefaultConfig())
	}
	if err := (AugmentConfig{}).Validate(); err != nil {
		t.Errorf("AugmentConfig{}: %v", err)
	}
	if got := (AugmentConfig{}).WithDefaults(); !reflect.DeepEqual(got, DefaultAugmentConfig()) {
		t.Errorf("AugmentConfig{}.WithDefaults() = %+v, want %+v", got, DefaultAugmentConfig())
	}
	if err := (MixupConfig{}).Validate(); err != nil {
		t.Errorf("MixupConfig{}: %v", err)
	}
	if got := (MixupConfig{}).WithDefaults(); !reflect.DeepEqual(got, DefaultMixupConfig()) || got.Active() {
		t.Errorf("MixupConfig{}.WithDefaults() = %+v, want %+v", got, DefaultMixupConfig())
	}
	// prob, switch_prob and correct_lam set to 0/false stay so.
	var off MixupConfig
	off.Prob.Set(0)
	off.SwitchProb.Set(0)
	off.CorrectLam.Set(false)
	if got := off.WithDefaults(); got.Prob != optional.FloatOf(0) || got.SwitchProb != optional.FloatOf(0) || got.CorrectLam != optional.BoolOf(false) {
		t.Errorf("explicit zeros resolved to %+v", got)
	}
	// The pipeline accepts the zero augment section as evaluation passes it.
	if _, err := NewPipeline(1, 8, 8, false, 0, AugmentConfig{}, []float64{0}, []float64{1}); err != nil {
		t.Errorf("NewPipeline with AugmentConfig{}: %v", err)
	}
	if _, err := NewMixup(MixupConfig{}, 3); err != nil {
		t.Errorf("NewMixup(MixupConfig{}): %v", err)
	}
}

func TestOpenChecks(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Root = t.TempDir()
	if _, err := Open(cfg, Train, 2); err == nil || !strings.Contains(err.Error(), "in_chans") {
		t.Errorf("in_chans 2: %v", err)
	}
	if _, err := Open(cfg, Split(5), 1); err == nil {
		t.Error("split 5 accepted")
	}
	cfg.Mean, cfg.Std = []float64{0.1, 0.2, 0.3}, []float64{1, 1, 1}
	if _, err := Open(cfg, Train, 1); err == nil || !strings.Contains(err.Error(), "data.mean") {
		t.Errorf("3 means for 1 channel: %v", err)
	}
}

func TestDefaultNorm(t *testing.T) {
	cases := []struct {
		name      DatasetName
		c         int
		mean, std []float64
	}{
		{NameMNIST, 1, []float64{0.1307}, []float64{0.3081}},
		{NameMNIST, 3, []float64{0.1307, 0.1307, 0.1307}, []float64{0.3081, 0.3081, 0.3081}},
		{NameFashionMNIST, 1, []float64{0.2860}, []float64{0.3530}},
		{NameCIFAR10, 3, []float64{0.4914, 0.4822, 0.4465}, []float64{0.2470, 0.2435, 0.2616}},
		{NameFolder, 3, []float64{0.485, 0.456, 0.406}, []float64{0.229, 0.224, 0.225}},
		{NameFolder, 1, []float64{0.5}, []float64{0.5}},
	}
	for _, c := range cases {
		m, s := DefaultNorm(c.name, c.c)
		if !slices.Equal(m, c.mean) || !slices.Equal(s, c.std) {
			t.Errorf("%s/%d: %v %v", c.name, c.c, m, s)
		}
	}
	if m, _ := DefaultNorm(NameCIFAR10, 1); len(m) != 1 || math.Abs(m[0]-0.4809) > 1e-3 {
		t.Errorf("cifar10 gray mean %v", m)
	}
}
