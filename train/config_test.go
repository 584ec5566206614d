package train

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/vitgo/vit/internal/cfgerr/cfgerrtest"
	"github.com/vitgo/vit/internal/optional"
	"github.com/vitgo/vit/optim"
)

// TestParseConfigStrict: each malformed config is refused with a
// *ConfigError naming the key and, for keys in the file, the line: no
// silent truncation, empty -set, second document or type error without the
// key.
func TestParseConfigStrict(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		sets       []string
		key        string // the ConfigError's key; "" = no error
		line       int    // its line; -1 = not a ConfigError (document-level)
	}{
		{"defaults", "", nil, "", 0},
		{"unknown key", "model:\n  embed_dim: 64\n  num_head: 4\n", nil, "model.num_head", 3},
		{"unknown section", "modle:\n  depth: 2\n", nil, "modle", 1},
		{"bad type", "model:\n  depth: two\n", nil, "model.depth", 2},
		{"type error names key", "train:\n  epochs: 3\n  batch_size: abc\n", nil, "train.batch_size", 3},
		{"16.7 into an int", "train:\n  batch_size: 16.7\n", nil, "train.batch_size", 2},
		{"2.9 epochs", "train:\n  epochs: 2.9\n", nil, "train.epochs", 2},
		{"1e6 is an integer, out of bounds", "model:\n  depth: 1e6\n", nil, "model.depth", 2},
		{"img_size fraction", "model:\n  img_size: 28.5\n", nil, "model.img_size", 2},
		{"empty value", "model:\n  depth:\n", nil, "model.depth", 2},
		{"explicit zero that means default", "optim:\n  lr: 0\n", nil, "optim.lr", 2},
		{"explicit empty enum", "data:\n  name: \"\"\n", nil, "data.name", 2},
		{"explicit zero that is a setting", "optim:\n  clip_grad: 0\n  weight_decay: 0\n", nil, "", 0},
		{"invalid value names key", "optim:\n  lr: -1\n", nil, "optim.lr", 2},
		{"model value", "model:\n  embed_dim: 10\n  num_heads: 3\n", nil, "model.num_heads", 3},
		{"train value", "train:\n  batch_size: -1\n", nil, "train.batch_size", 2},
		{"enum at parse", "model:\n  readout: max\n", nil, "model.readout", 2},
		{"data name", "data:\n  name: imagenet21k\n", nil, "data.name", 2},
		{"negative seed", "train:\n  seed: -1\n", nil, "train.seed", 2},
		{"yes is not a bool", "model:\n  qkv_bias: yes\n", nil, "model.qkv_bias", 2},
		{"section not a mapping", "model: 3\n", nil, "model", 1},
		{"repeated key", "optim:\n  lr: 1e-3\n  lr: 2e-3\n", nil, "optim.lr", 3},
		{"alias", "optim:\n  lr: &a 1e-3\n  min_lr: *a\n", nil, "optim.lr", 2},
		{"betas element", "optim:\n  betas: [0.9, 1.5]\n", nil, "optim.betas[1]", 2},
		{"second document", "model:\n  depth: 2\n---\nmodel:\n  depth: 3\n", nil, "", -1},
		{"trailing ---", "model:\n  depth: 2\n---\n", nil, "", -1},
		{"not a mapping", "- 1\n- 2\n", nil, "", -1},
		{"set ok", "", []string{"optim.lr=5e-4", "model.img_size=[32, 48]", "model.patch_size=16"}, "", 0},
		{"set section", "", []string{"model={depth: 3, embed_dim: 96}"}, "", 0},
		{"set empty", "model:\n  depth: 4\n", []string{"model.depth="}, "model.depth", 0},
		{"set ln_eps inf", "", []string{"model.ln_eps=.inf"}, "model.ln_eps", 0},
		{"set unknown", "", []string{"optim.learning_rate=1"}, "optim.learning_rate", 0},
		{"set into a value", "", []string{"optim.clip_grad.v=1"}, "optim.clip_grad", 0},
		{"set explicit zero", "", []string{"optim.clip_grad=0", "model.qkv_bias=false"}, "", 0},
		{"yes is not an optional bool", "checkpoint:\n  save_best: yes\n", nil, "checkpoint.save_best", 2},
		{"string is not an optional number", "mixup:\n  prob: \"1\"\n", nil, "mixup.prob", 2},
		{"empty optional", "optim:\n  clip_grad:\n", nil, "optim.clip_grad", 2},
		{"set typed", "", []string{"train.epochs=many"}, "train.epochs", 0},
		{"set truncation", "", []string{"train.batch_size=16.7"}, "train.batch_size", 0},
		{"set invalid", "", []string{"mixup.prob=1.5"}, "mixup.prob", 0},
		{"set two documents", "", []string{"train.epochs=1\n---\n2"}, "train.epochs", 0},
		{"set malformed", "", []string{"optim.lr"}, "", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tc.yaml), tc.sets)
			if e := cfgerrtest.Check(err, tc.key, tc.line); e != nil {
				t.Fatal(e)
			}
		})
	}
}

// TestEmptySetKeepsNothingSilently: -set model.depth= neither keeps the
// file's value nor falls back to the default; it is refused.
func TestEmptySetKeepsNothingSilently(t *testing.T) {
	for _, set := range []string{"model.depth=", "model.depth=  ", "train.out_dir="} {
		_, err := ParseConfig([]byte("model:\n  depth: 4\n"), []string{set})
		var ce *ConfigError
		if key, _, _ := strings.Cut(set, "="); !errors.As(err, &ce) || ce.Key != key {
			t.Errorf("-set %s: %v, want a ConfigError for %s", set, err, key)
		}
	}
}

// TestLoadConfigTooLarge: a file over MaxConfigBytes is refused before it is
// parsed.
func TestLoadConfigTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.yaml")
	big := append([]byte("model:\n  depth: 2\n# "), bytes.Repeat([]byte("x"), MaxConfigBytes)...)
	if err := os.WriteFile(path, big, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadConfig(path, nil)
	if !errors.Is(err, ErrConfigTooLarge) || !strings.Contains(err.Error(), "big.yaml") {
		t.Fatalf("error %v: want ErrConfigTooLarge naming the file", err)
	}
}

// unknownKeys is a config of n unknown keys under model.
func unknownKeys(n int) []byte {
	var b bytes.Buffer
	b.WriteString("model:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  k%s:\n", strconv.FormatInt(int64(i), 36))
	}
	return b.Bytes()
}

// TestUnknownKeysLinear: 100k unknown keys are reported (the first
// strictyaml.MaxReported, then a count). That they take no quadratic work
// is BenchmarkUnknownKeys's to show: a test does not time.
func TestUnknownKeysLinear(t *testing.T) {
	b := unknownKeys(100_000)
	if len(b) > MaxConfigBytes {
		t.Fatalf("test config is %d bytes, over the limit", len(b))
	}
	_, err := ParseConfig(b, nil)
	if err == nil {
		t.Fatal("accepted")
	}
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Key != "model.k0" || ce.Line != 2 {
		t.Fatalf("first error %v, want model.k0 at line 2", err)
	}
	if !strings.Contains(err.Error(), "more errors") {
		t.Errorf("the rest are not counted: %.200s", err)
	}
}

// BenchmarkUnknownKeys parses configs of 10k and 100k unknown keys: linear
// work takes ten times as long for the second.
func BenchmarkUnknownKeys(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		cfg := unknownKeys(n)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				ParseConfig(cfg, nil)
			}
		})
	}
}

func TestSetOverrides(t *testing.T) {
	cfg, err := ParseConfig([]byte("optim:\n  lr: 1e-3\nmodel:\n  img_size: 224\n"), []string{"optim.lr=5e-4", "model.img_size=[32, 48]", "model.patch_size=16", "train.out_dir=/tmp/x"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Optim.LR != 5e-4 || cfg.Model.ImgSize != [2]int{32, 48} || cfg.Model.PatchSize != 16 || cfg.Train.OutDir != "/tmp/x" {
		t.Fatalf("overrides not applied: lr %v img %v patch %d out %s", cfg.Optim.LR, cfg.Model.ImgSize, cfg.Model.PatchSize, cfg.Train.OutDir)
	}
	if cfg.Optim.WeightDecay != optional.FloatOf(0.05) {
		t.Fatalf("absent key lost its default: weight_decay %v", cfg.Optim.WeightDecay)
	}
}

func TestShippedConfigsLoad(t *testing.T) {
	files, err := filepath.Glob("../configs/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no configs found: %v", err)
	}
	for _, f := range files {
		if _, err := LoadConfig(f, nil); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if _, err := LoadConfig(filepath.Join(t.TempDir(), "missing.yaml"), nil); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("missing file: error %v should name it", err)
	}
}

func TestConfigRoundTrip(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Model.ImgSize = [2]int{32, 48}
	cfg.Model.PatchSize = 16
	b, err := cfg.YAML()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := LoadConfig(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := back.YAML()
	if string(b) != string(b2) {
		t.Fatalf("resolved config does not round-trip:\n%s\nvs\n%s", b, b2)
	}
}

// TestZeroConfigResolvesToDefaults: Config{}.WithDefaults() is
// DefaultConfig() in every field, so a key added later with a non-zero
// default but no WithDefaults entry fails here; the keys whose 0/false is a
// setting (zeroSettings) are checked one by one against their documented
// defaults, and set to 0/false they stay so.
func TestZeroConfigResolvesToDefaults(t *testing.T) {
	got, want := (Config{}).WithDefaults(), DefaultConfig()
	if !reflect.DeepEqual(got, want) {
		gb, _ := got.YAML()
		wb, _ := want.YAML()
		t.Errorf("Config{}.WithDefaults():\n%s\nwant\n%s", gb, wb)
	}
	if err := (Config{}).Validate(); err != nil {
		t.Errorf("Config{}.Validate() = %v", err)
	}
	// Each key whose 0/false is a setting: its documented default from the
	// zero Config, and 0/false when set so in Go.
	d := (Config{}).WithDefaults()
	var zero Config
	m, o, x, c := &zero.Model, &zero.Optim, &zero.Mixup, &zero.Checkpoint
	for key, v := range map[string]struct {
		got, def any // from Config{}.WithDefaults(); the documented default
		setZero  func()
	}{
		"optim.clip_grad":      {d.Optim.ClipGrad.Value(), 1.0, func() { o.ClipGrad.Set(0) }},
		"optim.weight_decay":   {d.Optim.WeightDecay.Value(), 0.05, func() { o.WeightDecay.Set(0) }},
		"optim.warmup_epochs":  {d.Optim.WarmupEpochs.Value(), 1.0, func() { o.WarmupEpochs.Set(0) }},
		"optim.warmup_lr":      {d.Optim.WarmupLR.Value(), 1e-6, func() { o.WarmupLR.Set(0) }},
		"optim.min_lr":         {d.Optim.MinLR.Value(), 1e-5, func() { o.MinLR.Set(0) }},
		"optim.layer_decay":    {d.Optim.LayerDecay, 0.0, func() { o.LayerDecay = 0 }}, // its default is 0 (off)
		"model.zero_init_head": {d.Model.ZeroInitHead.Value(), true, func() { m.ZeroInitHead.Set(false) }},
		"model.qkv_bias":       {d.Model.QKVBias.Value(), true, func() { m.QKVBias.Set(false) }},
		"mixup.correct_lam":    {d.Mixup.CorrectLam.Value(), true, func() { x.CorrectLam.Set(false) }},
		"mixup.prob":           {d.Mixup.Prob.Value(), 1.0, func() { x.Prob.Set(0) }},
		"mixup.switch_prob":    {d.Mixup.SwitchProb.Value(), 0.5, func() { x.SwitchProb.Set(0) }},
		"checkpoint.save_best": {d.Checkpoint.SaveBest.Value(), true, func() { c.SaveBest.Set(false) }},
		"distill.alpha":        {d.Distill.Alpha.Value(), 0.5, func() { zero.Distill.Alpha.Set(0) }},
	} {
		if _, ok := zeroSettings[key]; !ok {
			t.Errorf("%s is not in zeroSettings", key)
		}
		if v.got != v.def {
			t.Errorf("Config{}.WithDefaults(): %s = %v, want the default %v", key, v.got, v.def)
		}
		v.setZero()
	}
	flat, err := flatConfig(zero.WithDefaults())
	if err != nil {
		t.Fatal(err)
	}
	for key, v := range zeroSettings {
		if flat[key] != v.zero {
			t.Errorf("set to %s in Go, %s resolves to %s", v.zero, key, flat[key])
		}
	}
}

// TestConfigWarnings: Lamb with a head that starts at zero is warned of
// (it stays at chance on MNIST); AdamW, a non-zero head or a loaded head are
// not.
func TestConfigWarnings(t *testing.T) {
	for _, tc := range []struct {
		sets []string
		warn bool
	}{
		{[]string{"optim.opt=lamb"}, true},
		{[]string{"optim.opt=lamb", "model.zero_init_head=false"}, false},
		{[]string{"optim.opt=adamw"}, false},
		{[]string{"optim.opt=lamb", "finetune.init_from=x.safetensors"}, false},
		{[]string{"optim.opt=lamb", "finetune.init_from=x.safetensors", "finetune.reset_head=true"}, true},
	} {
		cfg, err := LoadConfig("../configs/mnist_vit_tiny.yaml", tc.sets)
		if err != nil {
			t.Fatal(err)
		}
		w := cfg.Warnings()
		if got := len(w) > 0 && strings.Contains(w[0], "model.zero_init_head"); got != tc.warn {
			t.Errorf("%v: warnings %q, want one naming model.zero_init_head: %v", tc.sets, w, tc.warn)
		}
	}
}

// TestLambEpsDefault: optim.eps left out is timm's 1e-6 for lamb, whether
// optim.opt comes from the file or from -set, and AdamW's 1e-8 otherwise;
// a given optim.eps is kept.
func TestLambEpsDefault(t *testing.T) {
	for _, tc := range []struct {
		src  string
		sets []string
		want float64
	}{
		{"optim: {opt: lamb}\n", nil, optim.LambEps},
		{"", []string{"optim.opt=lamb"}, optim.LambEps},
		{"optim: {opt: lamb, eps: 1.0e-7}\n", nil, 1e-7},
		{"", []string{"optim.opt=sgd"}, 1e-8},
		{"", nil, 1e-8},
	} {
		cfg, err := ParseConfig([]byte(tc.src), tc.sets)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Optim.Eps != tc.want {
			t.Errorf("%q %v: optim.eps %g, want %g", tc.src, tc.sets, cfg.Optim.Eps, tc.want)
		}
	}
}
