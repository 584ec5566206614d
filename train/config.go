package train

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/optim"
)

// Config is a whole run: one YAML file with a section per concern. Load
// decodes a file over DefaultConfig, so absent keys keep their defaults.
type Config struct {
	Model      layers.Config      `yaml:"model"`
	Data       data.Config        `yaml:"data"`
	Augment    data.AugmentConfig `yaml:"augment"`
	Mixup      data.MixupConfig   `yaml:"mixup"`
	Optim      optim.Config       `yaml:"optim"`
	Train      RunConfig          `yaml:"train"`
	Checkpoint CheckpointConfig   `yaml:"checkpoint"`
	Finetune   FinetuneConfig     `yaml:"finetune"`
}

// RunConfig is the train section: the loop's length, batch and outputs.
type RunConfig struct {
	Epochs        int    `yaml:"epochs"`          // passes over the training set; default 10
	MaxSteps      int    `yaml:"max_steps"`       // stop after this many optimizer steps; 0 = off
	BatchSize     int    `yaml:"batch_size"`      // training batch; default 128
	EvalBatchSize int    `yaml:"eval_batch_size"` // evaluation batch; 0 = batch_size
	Seed          uint64 `yaml:"seed"`            // seeds init, data order, augmentation, dropout; default 0
	OutDir        string `yaml:"out_dir"`         // where checkpoints, metrics and plots go; default runs/default
	EvalEvery     int    `yaml:"eval_every"`      // evaluate every N epochs (and always after the last); default 1
	LogEvery      int    `yaml:"log_every"`       // log a training line every N steps; default 50
	Threads       int    `yaml:"threads"`         // GOMAXPROCS; 0 = all cores
	// GradAccumSteps splits each rank's share of the batch into this many
	// micro-batches whose gradients are summed before one update; the graph
	// is built for the micro-batch. 0 or 1 = off.
	GradAccumSteps int `yaml:"grad_accum_steps"`
}

// CheckpointConfig is the checkpoint section.
type CheckpointConfig struct {
	KeepLast   int  `yaml:"keep_last"`   // also keep epoch_N.safetensors for the last N epochs; 0 = only last and best
	SaveBest   bool `yaml:"save_best"`   // write best.safetensors by val_top1; default true
	EverySteps int  `yaml:"every_steps"` // also write last.* every N steps inside an epoch; 0 = only at epoch ends
}

// FinetuneConfig is the finetune section: start from existing weights.
type FinetuneConfig struct {
	InitFrom  string `yaml:"init_from"`  // a model .safetensors (ours or a plain timm state_dict); "" = train from scratch
	ResetHead bool   `yaml:"reset_head"` // re-initialise the head even when num_classes matches
	Interp    string `yaml:"interp"`     // pos_embed resampling: bicubic (default) | bilinear
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
			Epochs: 10, BatchSize: 128, OutDir: "runs/default", EvalEvery: 1, LogEvery: 50,
		},
		Checkpoint: CheckpointConfig{SaveBest: true},
		Finetune:   FinetuneConfig{Interp: "bicubic"},
	}
}

// Validate reports every invalid value across all sections, each naming its key.
func (c Config) Validate() error {
	errs := []error{c.Model.Validate(), c.Data.Validate(), c.Augment.Validate(), c.Mixup.Validate(), c.Optim.Validate()}
	bad := func(key, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, a...)))
	}
	t := c.Train
	if t.Epochs <= 0 {
		bad("train.epochs", "must be positive, got %d", t.Epochs)
	}
	if t.MaxSteps < 0 {
		bad("train.max_steps", "must be ≥ 0, got %d", t.MaxSteps)
	}
	if t.BatchSize <= 0 {
		bad("train.batch_size", "must be positive, got %d", t.BatchSize)
	}
	if t.EvalBatchSize < 0 {
		bad("train.eval_batch_size", "must be ≥ 0, got %d", t.EvalBatchSize)
	}
	if t.OutDir == "" {
		bad("train.out_dir", "must not be empty")
	}
	if t.EvalEvery <= 0 {
		bad("train.eval_every", "must be positive, got %d", t.EvalEvery)
	}
	if t.LogEvery <= 0 {
		bad("train.log_every", "must be positive, got %d", t.LogEvery)
	}
	if t.Threads < 0 {
		bad("train.threads", "must be ≥ 0, got %d", t.Threads)
	}
	if t.GradAccumSteps < 0 || t.BatchSize > 0 && (t.GradAccumSteps > t.BatchSize || t.GradAccumSteps > 0 && t.BatchSize%t.GradAccumSteps != 0) {
		bad("train.grad_accum_steps", "must be 0 (off) or a divisor of train.batch_size %d, got %d", t.BatchSize, t.GradAccumSteps)
	}
	if c.Checkpoint.EverySteps < 0 {
		bad("checkpoint.every_steps", "must be ≥ 0, got %d", c.Checkpoint.EverySteps)
	}
	if c.Checkpoint.KeepLast < 0 {
		bad("checkpoint.keep_last", "must be ≥ 0, got %d", c.Checkpoint.KeepLast)
	}
	switch c.Finetune.Interp {
	case "bicubic", "bilinear":
	default:
		bad("finetune.interp", `must be "bicubic" or "bilinear", got %q`, c.Finetune.Interp)
	}
	return errors.Join(errs...)
}

// LoadConfig reads a YAML config over the defaults, applies the key=value
// overrides in order, and validates the result. Unknown keys are errors that
// name the key and its line; values are typed by the schema.
func LoadConfig(path string, overrides []string) (Config, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	cfg, err := ParseConfig(src, overrides)
	if err != nil {
		return Config{}, fmt.Errorf("config %s: %w", path, err)
	}
	return cfg, nil
}

// ParseConfig is LoadConfig on YAML bytes.
func ParseConfig(src []byte, overrides []string) (Config, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return Config{}, err
	}
	if doc.Kind == 0 { // empty file
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return Config{}, errors.New("the top level must be a mapping of sections")
	}
	for _, o := range overrides {
		if err := applyOverride(doc.Content[0], o); err != nil {
			return Config{}, err
		}
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	if err := enc.Encode(&doc); err != nil {
		return Config{}, err
	}
	cfg := DefaultConfig()
	dec := yaml.NewDecoder(bytes.NewReader(buf.Bytes()))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil {
		// Re-decode the original for line numbers that match the user's file.
		if len(overrides) > 0 {
			d2 := yaml.NewDecoder(bytes.NewReader(src))
			d2.KnownFields(true)
			c2 := DefaultConfig()
			if err2 := d2.Decode(&c2); err2 != nil && !errors.Is(err2, io.EOF) {
				return Config{}, err2
			}
		}
		return Config{}, err
	}
	return cfg, cfg.Validate()
}

// applyOverride sets key=value in the YAML tree; the key is a dotted path
// that must exist in the schema and the value is parsed as YAML.
func applyOverride(root *yaml.Node, kv string) error {
	key, val, ok := strings.Cut(kv, "=")
	if !ok || key == "" {
		return fmt.Errorf("-set %q: want key=value", kv)
	}
	path := strings.Split(key, ".")
	if err := schemaHas(reflect.TypeOf(Config{}), path); err != nil {
		return fmt.Errorf("-set %s: %w", key, err)
	}
	var v yaml.Node
	if err := yaml.Unmarshal([]byte(val), &v); err != nil {
		return fmt.Errorf("-set %s: value %q: %w", key, val, err)
	}
	var value *yaml.Node
	if len(v.Content) == 1 {
		value = v.Content[0]
	} else {
		value = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: ""}
	}
	n := root
	for i, k := range path {
		var next *yaml.Node
		for j := 0; j+1 < len(n.Content); j += 2 {
			if n.Content[j].Value == k {
				next = n.Content[j+1]
				if i == len(path)-1 {
					n.Content[j+1] = value
				}
				break
			}
		}
		if i == len(path)-1 {
			if next == nil {
				n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, value)
			}
			return nil
		}
		if next == nil {
			next = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, next)
		}
		if next.Kind != yaml.MappingNode {
			return fmt.Errorf("-set %s: %s is not a section", key, k)
		}
		n = next
	}
	return nil
}

// schemaHas checks that a dotted key names a field of the config schema.
func schemaHas(t reflect.Type, path []string) error {
	for i, k := range path {
		if t.Kind() != reflect.Struct {
			return fmt.Errorf("%s is not a section", strings.Join(path[:i], "."))
		}
		found := false
		for f := 0; f < t.NumField(); f++ {
			tag, _, _ := strings.Cut(t.Field(f).Tag.Get("yaml"), ",")
			if tag == k {
				t, found = t.Field(f).Type, true
				break
			}
		}
		if !found {
			return fmt.Errorf("unknown key %q", strings.Join(path[:i+1], "."))
		}
	}
	return nil
}

// YAML renders the resolved config, as written to the run's config.yaml.
func (c Config) YAML() ([]byte, error) { return yaml.Marshal(c) }
