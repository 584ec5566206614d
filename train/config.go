package train

import (
	"fmt"
	"io"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/internal/cfgerr"
	"github.com/vitgo/vit/internal/enum"
	"github.com/vitgo/vit/internal/optional"
	"github.com/vitgo/vit/internal/regfile"
	"github.com/vitgo/vit/internal/strictyaml"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/optim"
)

// ConfigError is one invalid config value: its dotted key, the line of the
// YAML file it is on (0 for an override or a Go value) and what is
// wrong. Every error of LoadConfig, ParseConfig and the sections' Validate
// methods about a value wraps one; find it with errors.As.
type ConfigError = cfgerr.Error

// MaxConfigBytes is the largest config file LoadConfig reads: real configs
// are a few hundred bytes, and the YAML parser's memory grows many times
// faster than the file (a list of tens of megabytes takes gigabytes).
const MaxConfigBytes = 1 << 20

// Bounds on the train and checkpoint keys, far above any real run, so that a
// typo is an error naming the key rather than an allocation or a loop that
// cannot end. Memory-bound keys (batch sizes, prefetch) are also checked
// against the machine by CheckMemory.
const (
	MaxEpochs    = 1_000_000
	MaxSteps     = 1 << 40
	MaxBatchSize = 1 << 16
	MaxThreads   = 4096
	MaxEvery     = 1 << 40 // eval_every, log_every, checkpoint.every_steps
	MaxKeepLast  = 1_000_000
)

// Config is a whole run: one YAML file with a section per concern.
//
// Defaults follow one rule. LoadConfig and ParseConfig decode a file over
// DefaultConfig, so an absent key keeps its default and a present key is
// taken literally; an explicit value that the Go rule below would read as
// "default" (optim.lr: 0, model.depth: 0, data.name: "") is refused, not
// replaced. In Go, the zero value of every section is valid and means the
// defaults: Config{}.WithDefaults() is DefaultConfig(). A plain field's zero
// means its default; the keys whose 0 or false is a setting that differs
// from the default (clip_grad, weight_decay, warmup_epochs, warmup_lr,
// min_lr, zero_init_head, qkv_bias, prob, switch_prob, correct_lam,
// save_best) are optional.Float or optional.Bool fields, whose zero value is
// unset (the default) and whose Set(0) or YAML 0 is 0. WithDefaults (on
// Config and on each section) fills them, and Run, layers.New,
// optim.New and the data loader call it.
type Config struct {
	Model      layers.Config      `yaml:"model"`
	Data       data.Config        `yaml:"data"`
	Augment    data.AugmentConfig `yaml:"augment"`
	Mixup      data.MixupConfig   `yaml:"mixup"`
	Optim      optim.Config       `yaml:"optim"`
	Train      RunConfig          `yaml:"train"`
	Checkpoint CheckpointConfig   `yaml:"checkpoint"`
	Finetune   FinetuneConfig     `yaml:"finetune"`
	Distill    DistillConfig      `yaml:"distill"`
}

// RunConfig is the train section: the loop's length, batch and outputs.
type RunConfig struct {
	Epochs        int    `yaml:"epochs"`          // passes over the training set, 1 to MaxEpochs; 0 = 10
	MaxSteps      int    `yaml:"max_steps"`       // stop after this many optimizer steps; 0 = off
	BatchSize     int    `yaml:"batch_size"`      // training batch, 1 to MaxBatchSize; 0 = 128
	EvalBatchSize int    `yaml:"eval_batch_size"` // evaluation batch, at most MaxBatchSize; 0 = batch_size
	Seed          uint64 `yaml:"seed"`            // seeds init, data order, augmentation, dropout; default 0
	OutDir        string `yaml:"out_dir"`         // where checkpoints, metrics and plots go; "" = runs/default
	EvalEvery     int    `yaml:"eval_every"`      // evaluate every N epochs (and always after the last); 0 = 1
	LogEvery      int    `yaml:"log_every"`       // log a training line every N steps; 0 = 50
	Threads       int    `yaml:"threads"`         // GOMAXPROCS, at most MaxThreads; 0 = all cores
	// GradAccumSteps splits each rank's share of the batch into this many
	// micro-batches whose gradients are summed before one update; the graph
	// is built for the micro-batch. 0 or 1 = off.
	GradAccumSteps int `yaml:"grad_accum_steps"`
	// Precision is the arithmetic of the matrix products of the training
	// and evaluation graphs: fp32 (default, also "") or bf16, torch
	// autocast's bfloat16 operands with float32 accumulation (see
	// graph.Precision). Weights, optimizer state, EMA, checkpoints and
	// every reduction stay float32.
	Precision graph.Precision `yaml:"precision"`
	// Recompute names the activations the backward pass computes again
	// instead of keeping them from the forward pass: none (default, also
	// ""); mlp, each block's mlp.fc1 output (layers.RecomputeMLP); block,
	// all of a block but its input and attention's output
	// (layers.RecomputeBlock). bf16 and model.dropout 0 only
	// (layers.Recompute.Check). It changes no bit of the run, so a resumed
	// run may change it.
	Recompute layers.Recompute `yaml:"recompute"`
}

// CheckpointConfig is the checkpoint section. Its zero value means the
// defaults: SaveBest unset is true, optional.BoolOf(false) turns it off.
type CheckpointConfig struct {
	KeepLast   int           `yaml:"keep_last"`   // also keep epoch_N.safetensors for the last N epochs; 0 = only last and best
	SaveBest   optional.Bool `yaml:"save_best"`   // write best.safetensors by val_top1; default true
	EverySteps int           `yaml:"every_steps"` // also write last.* every N steps inside an epoch; 0 = only at epoch ends
}

// FinetuneConfig is the finetune section: start from existing weights.
type FinetuneConfig struct {
	InitFrom  string `yaml:"init_from"`  // a model .safetensors (ours or a plain timm state_dict); "" = train from scratch
	ResetHead bool   `yaml:"reset_head"` // re-initialise the head even when num_classes matches
	Interp    Interp `yaml:"interp"`     // pos_embed resampling: bicubic (default, also "") | bilinear
	// Freeze lists patterns of parameter names not to train (path.Match
	// globs over timm's dotted names: "patch_embed.*", "blocks.[0-5].*");
	// see [FinetuneConfig.Frozen]. Empty: train everything.
	Freeze []string `yaml:"freeze"`
	// LinearProbe trains only the head(s) (HeadPatterns) and freezes the
	// rest; it excludes Freeze.
	LinearProbe bool `yaml:"linear_probe"`
}

// Interp names how pos_embed is resampled to a new patch grid, the value of
// finetune.interp. The zero value "" means InterpBicubic.
type Interp string

// The pos_embed resampling modes (PyTorch's F.interpolate modes).
const (
	InterpBicubic  Interp = "bicubic"
	InterpBilinear Interp = "bilinear"
)

// Validate reports whether i is a known mode ("" = bicubic).
func (i Interp) Validate() error {
	return enum.Check(i, InterpBicubic, InterpBilinear)
}

// DefaultConfig returns every section's defaults: a ViT-B/16 on MNIST, which
// a config file narrows down.
func DefaultConfig() Config {
	return Config{
		Model:   layers.DefaultConfig(),
		Data:    data.DefaultConfig(),
		Augment: data.DefaultAugmentConfig(),
		Mixup:   data.DefaultMixupConfig(),
		Optim:   optim.DefaultConfig(),
		Train: RunConfig{
			Epochs: 10, BatchSize: 128, OutDir: "runs/default", EvalEvery: 1, LogEvery: 50, Precision: graph.FP32, Recompute: layers.RecomputeNone,
		},
		Checkpoint: CheckpointConfig{SaveBest: optional.BoolOf(true)},
		Finetune:   FinetuneConfig{Interp: InterpBicubic},
		Distill:    DistillConfig{}.WithDefaults(),
	}
}

// WithDefaults returns c with every zero field that means "default" filled
// in, section by section (see each section's WithDefaults; train: epochs 10,
// batch_size 128, out_dir runs/default, eval_every 1, log_every 50,
// precision fp32;
// checkpoint: save_best true when unset; finetune: interp bicubic; distill:
// type none, alpha 0.5, tau 1), so
// Config{}.WithDefaults() is DefaultConfig(). Optional fields set to 0 or
// false are kept.
func (c Config) WithDefaults() Config {
	d := DefaultConfig()
	c.Model = c.Model.WithDefaults()
	c.Data = c.Data.WithDefaults()
	c.Augment = c.Augment.WithDefaults()
	c.Mixup = c.Mixup.WithDefaults()
	c.Optim = c.Optim.WithDefaults()
	for _, f := range []struct{ v, def *int }{
		{&c.Train.Epochs, &d.Train.Epochs}, {&c.Train.BatchSize, &d.Train.BatchSize},
		{&c.Train.EvalEvery, &d.Train.EvalEvery}, {&c.Train.LogEvery, &d.Train.LogEvery},
	} {
		if *f.v == 0 {
			*f.v = *f.def
		}
	}
	if c.Train.OutDir == "" {
		c.Train.OutDir = d.Train.OutDir
	}
	if c.Train.Precision == "" {
		c.Train.Precision = d.Train.Precision
	}
	if c.Train.Recompute == "" {
		c.Train.Recompute = d.Train.Recompute
	}
	c.Checkpoint.SaveBest = c.Checkpoint.SaveBest.Or(d.Checkpoint.SaveBest)
	if c.Finetune.Interp == "" {
		c.Finetune.Interp = d.Finetune.Interp
	}
	c.Distill = c.Distill.WithDefaults()
	return c
}

// Validate reports every invalid value across all sections, each a
// *ConfigError naming its key. Zero fields that mean a default are valid.
func (c Config) Validate() error {
	c = c.WithDefaults()
	errs := cfgerr.List{c.Model.Validate(), c.Data.Validate(), c.Augment.Validate(), c.Mixup.Validate(), c.Optim.Validate(), c.Distill.Validate(c.Model)}
	if err := c.Augment.ValidateAt(c.Model.ImgSize[0], c.Model.ImgSize[1]); err != nil {
		errs = append(errs, err)
	}
	t := c.Train
	intIn := func(key string, v, lo, hi int) {
		if v < lo || v > hi {
			errs.Add(key, "must be in [%d, %d], got %d", lo, hi, v)
		}
	}
	intIn("train.epochs", t.Epochs, 1, MaxEpochs)
	intIn("train.max_steps", t.MaxSteps, 0, MaxSteps)
	intIn("train.batch_size", t.BatchSize, 1, MaxBatchSize)
	intIn("train.eval_batch_size", t.EvalBatchSize, 0, MaxBatchSize)
	intIn("train.eval_every", t.EvalEvery, 1, MaxEvery)
	intIn("train.log_every", t.LogEvery, 1, MaxEvery)
	intIn("train.threads", t.Threads, 0, MaxThreads)
	intIn("checkpoint.every_steps", c.Checkpoint.EverySteps, 0, MaxEvery)
	intIn("checkpoint.keep_last", c.Checkpoint.KeepLast, 0, MaxKeepLast)
	if err := c.Finetune.Interp.Validate(); err != nil {
		errs.Add("finetune.interp", "%w", err)
	}
	if err := t.Precision.Validate(); err != nil {
		errs.Add("train.precision", "%w", err)
	} else if t.Precision.IsInt8() {
		errs.Add("train.precision", "%s is an inference precision (cmd/eval -precision int8): train in %s or %s", t.Precision, graph.FP32, graph.BF16)
	} else if t.Precision.IsBF16() && c.Model.PatchEmbed == layers.PatchConv {
		errs.Add("train.precision", "%s needs model.patch_embed %q: the %q form has no bfloat16 products", t.Precision, layers.PatchLinear, layers.PatchConv)
	}
	if err := t.Recompute.Validate(); err != nil {
		errs.Add("train.recompute", "%w", err)
	} else if err := t.Recompute.Check(t.Precision, c.Model.Dropout); err != nil {
		errs.Add("train.recompute", "%w", err)
	}
	if c.Model.Validate() == nil { // the patterns are checked against the model's names
		if _, err := FrozenNames(c); err != nil {
			errs = append(errs, err)
		}
	}
	if t.GradAccumSteps < 0 || t.GradAccumSteps > t.BatchSize || t.GradAccumSteps > 0 && t.BatchSize%t.GradAccumSteps != 0 {
		errs.Add("train.grad_accum_steps", "must be 0 (off) or a divisor of train.batch_size %d, got %d", t.BatchSize, t.GradAccumSteps)
	}
	return errs.Err()
}

// EvalBatch is the evaluation batch: train.eval_batch_size, or batch_size
// when that is 0.
func (c Config) EvalBatch() int {
	if c.Train.EvalBatchSize > 0 {
		return c.Train.EvalBatchSize
	}
	return c.Train.BatchSize
}

// LoadConfig reads a YAML config over the defaults, applies the key=value
// overrides in order, and validates the result (see ParseConfig). A file
// over MaxConfigBytes is refused before it is read.
func LoadConfig(path string, overrides []string) (Config, error) {
	f, _, err := regfile.Open(path)
	if err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, MaxConfigBytes+1))
	if err != nil {
		return Config{}, fmt.Errorf("config %s: %w", path, err)
	}
	cfg, err := ParseConfig(src, overrides)
	if err != nil {
		return Config{}, fmt.Errorf("config %s: %w", path, err)
	}
	return cfg, nil
}

// ErrConfigTooLarge is returned (wrapped) for a config over MaxConfigBytes.
var ErrConfigTooLarge = fmt.Errorf("config larger than %d bytes", MaxConfigBytes)

// ParseConfig is LoadConfig on YAML bytes. It is strict (see
// internal/strictyaml):
//   - one YAML document, a mapping of sections, at most MaxConfigBytes;
//     anchors and aliases are refused;
//   - every key must exist in the schema (unknown and repeated keys are
//     errors naming the key and line, found in time linear in the file);
//   - integers are integers: 16.7 is refused, not truncated (1e6 is 1000000);
//   - a type error names the key and the line;
//   - an empty value (`depth:` or the override model.depth=) is refused;
//   - an explicit value the Go zero rule would read as "the default"
//     (optim.lr: 0, data.name: "") is refused;
//
// then each override key=value (a dotted key, a YAML value) is applied in
// order, and the result is validated. Errors about one value are
// *ConfigError, with the line when the key came from the file; an
// override's errors are wrapped in a *strictyaml.OverrideError.
func ParseConfig(src []byte, overrides []string) (Config, error) {
	if len(src) > MaxConfigBytes {
		return Config{}, ErrConfigTooLarge
	}
	cfg, lines, err := configSchema.Parse(src, overrides)
	if err != nil {
		return Config{}, err
	}
	// augment.interpolation's default depends on random_resized_crop
	// (data.AugmentConfig.DefaultInterpolation); the parse filled in the
	// default without it.
	if _, set := lines["augment.interpolation"]; !set {
		cfg.Augment.Interpolation = cfg.Augment.DefaultInterpolation()
	}
	// optim.eps's default depends on optim.opt (Lamb's is timm's 1e-6);
	// the parse filled in AdamW's.
	if _, set := lines["optim.eps"]; !set && cfg.Optim.Opt == optim.OptLamb {
		cfg.Optim.Eps = optim.LambEps
	}
	err = cfg.Validate()
	cfgerr.Walk(err, func(e *cfgerr.Error) {
		key, _, _ := strings.Cut(e.Key, "[")
		if l := lines[key]; l > 0 && e.Line == 0 {
			e.Line = l
		}
	})
	return cfg, err
}

// configSchema is Config for the strict parser.
var configSchema = strictyaml.Schema[Config]{Default: DefaultConfig, Fill: Config.WithDefaults}

// YAML renders the resolved config (WithDefaults), as written to the run's
// config.yaml: plain values, every key present.
func (c Config) YAML() ([]byte, error) { return yaml.Marshal(c.WithDefaults()) }
