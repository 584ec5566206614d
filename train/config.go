package train

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/internal/cfgerr"
	"github.com/vitgo/vit/internal/enum"
	"github.com/vitgo/vit/internal/optional"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/optim"
)

// ConfigError is one invalid config value: its dotted key, the line of the
// YAML file it is on (0 for a -set override or a Go value) and what is
// wrong. Every error of LoadConfig, ParseConfig and the sections' Validate
// methods about a value wraps one; find it with errors.As.
type ConfigError = cfgerr.Error

// MaxConfigBytes is the largest config file LoadConfig reads: real configs
// are a few hundred bytes, and a 52 MB YAML list once took 6.8 GB to parse.
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
// optim.NewAdamW and the data loader call it.
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
			Epochs: 10, BatchSize: 128, OutDir: "runs/default", EvalEvery: 1, LogEvery: 50,
		},
		Checkpoint: CheckpointConfig{SaveBest: optional.BoolOf(true)},
		Finetune:   FinetuneConfig{Interp: InterpBicubic},
	}
}

// WithDefaults returns c with every zero field that means "default" filled
// in, section by section (see each section's WithDefaults; train: epochs 10,
// batch_size 128, out_dir runs/default, eval_every 1, log_every 50;
// checkpoint: save_best true when unset; finetune: interp bicubic), so
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
	c.Checkpoint.SaveBest = c.Checkpoint.SaveBest.Or(d.Checkpoint.SaveBest)
	if c.Finetune.Interp == "" {
		c.Finetune.Interp = d.Finetune.Interp
	}
	return c
}

// Validate reports every invalid value across all sections, each a
// *ConfigError naming its key. Zero fields that mean a default are valid.
func (c Config) Validate() error {
	c = c.WithDefaults()
	errs := cfgerr.List{c.Model.Validate(), c.Data.Validate(), c.Augment.Validate(), c.Mixup.Validate(), c.Optim.Validate()}
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
	if t.GradAccumSteps < 0 || t.GradAccumSteps > t.BatchSize || t.GradAccumSteps > 0 && t.BatchSize%t.GradAccumSteps != 0 {
		errs.Add("train.grad_accum_steps", "must be 0 (off) or a divisor of train.batch_size %d, got %d", t.BatchSize, t.GradAccumSteps)
	}
	return errs.Err()
}

// LoadConfig reads a YAML config over the defaults, applies the key=value
// overrides in order, and validates the result (see ParseConfig). A file
// over MaxConfigBytes is refused before it is read.
func LoadConfig(path string, overrides []string) (Config, error) {
	f, err := os.Open(path)
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

// maxReported caps the errors one parse reports; the rest are counted.
const maxReported = 20

// ParseConfig is LoadConfig on YAML bytes. It is strict:
//   - one YAML document, a mapping of sections, at most MaxConfigBytes;
//     anchors and aliases are refused;
//   - every key must exist in the schema (unknown and repeated keys are
//     errors naming the key and line, found in time linear in the file);
//   - integers are integers: 16.7 is refused, not truncated (1e6 is 1000000);
//   - a type error names the key and the line;
//   - an empty value (`depth:` or -set model.depth=) is refused;
//   - an explicit value the Go zero rule would read as "the default"
//     (optim.lr: 0, data.name: "") is refused;
//
// then each override key=value (a dotted key, a YAML value) is applied in
// order, and the result is validated. Errors about one value are
// *ConfigError, with the line when the key came from the file.
func ParseConfig(src []byte, overrides []string) (Config, error) {
	if len(src) > MaxConfigBytes {
		return Config{}, ErrConfigTooLarge
	}
	root, err := parseDocument(src)
	if err != nil {
		return Config{}, err
	}
	cfg := DefaultConfig()
	p := &parser{lines: map[string]int{}}
	if root != nil {
		p.setValue(reflect.ValueOf(&cfg).Elem(), root, "")
	}
	for _, o := range overrides {
		p.override(&cfg, o)
	}
	p.refuseDefaultZeros(cfg)
	if err := p.err(); err != nil {
		return Config{}, err
	}
	err = cfg.Validate()
	cfgerr.Walk(err, func(e *cfgerr.Error) {
		key, _, _ := strings.Cut(e.Key, "[")
		if l := p.lines[key]; l > 0 && e.Line == 0 {
			e.Line = l
		}
	})
	return cfg, err
}

// parseDocument decodes exactly one YAML document and returns its top-level
// mapping (nil for an empty file).
func parseDocument(src []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(src))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, err
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		line := next.Line
		if err != nil {
			return nil, fmt.Errorf("a second YAML document is not allowed: %w", err)
		}
		return nil, fmt.Errorf("line %d: a second YAML document (after ---) is not allowed; a config is one document", line)
	}
	if len(doc.Content) != 1 {
		return nil, nil
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		return nil, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: the top level must be a mapping of sections (model:, data:, …)", root.Line)
	}
	return root, nil
}

// parser walks YAML nodes into the Config schema, recording each present
// key's line and collecting errors.
type parser struct {
	lines   map[string]int // dotted key → line (0 for -set) for every key present
	errs    []error
	dropped int
}

func (p *parser) fail(key string, line int, format string, a ...any) {
	p.add(&cfgerr.Error{Key: key, Line: line, Err: fmt.Errorf(format, a...)})
}

func (p *parser) add(err error) {
	if len(p.errs) >= maxReported {
		p.dropped++
		return
	}
	p.errs = append(p.errs, err)
}

func (p *parser) err() error {
	if p.dropped > 0 {
		p.errs = append(p.errs, fmt.Errorf("… and %d more errors", p.dropped))
	}
	return errors.Join(p.errs...)
}

// fieldsByTag maps a struct type's YAML keys to field indices.
func fieldsByTag(t reflect.Type) map[string]int {
	m := make(map[string]int, t.NumField())
	for i := 0; i < t.NumField(); i++ {
		tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if tag != "" && tag != "-" {
			m[tag] = i
		}
	}
	return m
}

var unmarshalerType = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()

// setValue decodes n into v, the field for key.
func (p *parser) setValue(v reflect.Value, n *yaml.Node, key string) {
	line := n.Line
	if n.Kind == yaml.AliasNode || n.Anchor != "" {
		p.fail(key, line, "YAML anchors and aliases are not supported in a config")
		return
	}
	isNull := n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
	if reflect.PointerTo(v.Type()).Implements(unmarshalerType) {
		if isNull {
			p.fail(key, line, "no value (remove the key to keep the default)")
			return
		}
		if err := n.Decode(v.Addr().Interface()); err != nil {
			p.fail(key, line, "%v", stripLine(err))
		}
		return
	}
	if v.Kind() == reflect.Struct {
		if isNull {
			return // an empty section: nothing set
		}
		if n.Kind != yaml.MappingNode {
			p.fail(key, line, "want a mapping of keys, got %s", cfgerr.Describe(n))
			return
		}
		p.setStruct(v, n, key)
		return
	}
	if isNull {
		p.fail(key, line, "no value (remove the key to keep the default)")
		return
	}
	switch v.Kind() {
	case reflect.Int:
		i, err := cfgerr.Int(n)
		if err != nil {
			p.fail(key, line, "%v", err)
			return
		}
		v.SetInt(int64(i))
	case reflect.Uint64:
		var u uint64
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&u) != nil {
			p.fail(key, line, "want an integer from 0 to 2^64-1, got %s", cfgerr.Describe(n))
			return
		}
		v.SetUint(u)
	case reflect.Float64:
		f, err := cfgerr.Float(n)
		if err != nil {
			p.fail(key, line, "%v", err)
			return
		}
		v.SetFloat(f)
	case reflect.Bool:
		b, err := cfgerr.Bool(n)
		if err != nil {
			p.fail(key, line, "%v", err)
			return
		}
		v.SetBool(b)
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			p.fail(key, line, "want a string, got %s", cfgerr.Describe(n))
			return
		}
		v.SetString(n.Value)
		if val, ok := v.Interface().(interface{ Validate() error }); ok && n.Value != "" {
			if err := val.Validate(); err != nil {
				p.fail(key, line, "%v", err)
			}
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			p.fail(key, line, "want a list, got %s", cfgerr.Describe(n))
			return
		}
		if len(n.Content) == 0 {
			v.Set(reflect.Zero(v.Type())) // [] is the empty list, as an absent one
			return
		}
		out := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, e := range n.Content {
			p.setValue(out.Index(i), e, fmt.Sprintf("%s[%d]", key, i))
		}
		v.Set(out)
	default:
		p.fail(key, line, "unsupported config field type %s", v.Type())
	}
}

// setStruct decodes a mapping into the struct v (a section, or the whole
// config when key is ""). Each key is looked up once in a map, so the time is
// linear in the number of keys however many are unknown.
func (p *parser) setStruct(v reflect.Value, n *yaml.Node, key string) {
	fields := fieldsByTag(v.Type())
	seen := make(map[string]bool, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			p.fail(join(key, "?"), k.Line, "a key must be a plain name, got %s", cfgerr.Describe(k))
			continue
		}
		full := join(key, k.Value)
		if seen[k.Value] {
			p.fail(full, k.Line, "repeated key")
			continue
		}
		seen[k.Value] = true
		fi, ok := fields[k.Value]
		if !ok && len(p.errs) >= maxReported {
			p.dropped++
			continue
		}
		if !ok {
			p.fail(full, k.Line, "unknown key%s", hint(key, fields))
			continue
		}
		p.lines[full] = k.Line
		p.setValue(v.Field(fi), val, full)
	}
}

// hint lists a section's keys for an unknown-key error.
func hint(section string, fields map[string]int) string {
	if len(fields) > 24 {
		return ""
	}
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names)
	where := "this section"
	if section == "" {
		where = "the top level"
	}
	return fmt.Sprintf(" (%s has: %s)", where, strings.Join(names, ", "))
}

func join(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}

// stripLine drops yaml.v3's "line N: " prefix from a type error, since the
// ConfigError carries the line itself.
func stripLine(err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msgs := make([]string, len(te.Errors))
		for i, m := range te.Errors {
			if _, rest, ok := strings.Cut(m, ": "); ok && strings.HasPrefix(m, "line ") {
				m = rest
			}
			msgs[i] = m
		}
		return errors.New(strings.Join(msgs, "; "))
	}
	return err
}

// override applies one -set key=value.
func (p *parser) override(cfg *Config, kv string) {
	key, val, ok := strings.Cut(kv, "=")
	key = strings.TrimSpace(key)
	if !ok || key == "" {
		p.add(fmt.Errorf("-set %q: want key=value", kv))
		return
	}
	if strings.TrimSpace(val) == "" {
		p.add(fmt.Errorf("-set %s: %w", kv, cfgerr.New(key, "empty value (give a value, or drop the -set to keep the file's)")))
		return
	}
	v := reflect.ValueOf(cfg).Elem()
	path := strings.Split(key, ".")
	for i, k := range path {
		if v.Kind() != reflect.Struct || reflect.PointerTo(v.Type()).Implements(unmarshalerType) {
			p.add(fmt.Errorf("-set %s: %w", kv, cfgerr.New(strings.Join(path[:i], "."), "is not a section")))
			return
		}
		fi, ok := fieldsByTag(v.Type())[k]
		if !ok {
			p.add(fmt.Errorf("-set %s: %w", kv, cfgerr.New(strings.Join(path[:i+1], "."), "unknown key%s", hint(strings.Join(path[:i], "."), fieldsByTag(v.Type())))))
			return
		}
		v = v.Field(fi)
	}
	node, err := parseDocumentValue(val)
	if err != nil {
		p.add(fmt.Errorf("-set %s: %w", kv, cfgerr.New(key, "value %q: %v", val, err)))
		return
	}
	sub := &parser{lines: map[string]int{}}
	sub.setValue(v, node, key)
	for _, e := range sub.errs {
		cfgerr.Walk(e, func(ce *cfgerr.Error) { ce.Line = 0 })
		p.add(fmt.Errorf("-set %s: %w", kv, e))
	}
	p.lines[key] = 0
	for k := range sub.lines {
		p.lines[k] = 0
	}
}

// parseDocumentValue parses a -set value as one YAML document.
func parseDocumentValue(val string) (*yaml.Node, error) {
	dec := yaml.NewDecoder(strings.NewReader(val))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		return nil, errors.New("more than one YAML document")
	}
	if len(doc.Content) != 1 {
		return nil, errors.New("no value")
	}
	return doc.Content[0], nil
}

// refuseDefaultZeros reports each present key whose value is the zero value
// that Config.WithDefaults would replace: in a file, optim.lr: 0 is a
// mistake, not a request for the default.
func (p *parser) refuseDefaultZeros(cfg Config) {
	root := reflect.ValueOf(cfg)
	for key, line := range p.lines {
		v, ok := fieldAt(root, key)
		if !ok || v.Kind() == reflect.Struct || !v.IsZero() {
			continue
		}
		probe := DefaultConfig()
		pv, _ := fieldAt(reflect.ValueOf(&probe).Elem(), key)
		pv.Set(reflect.Zero(pv.Type()))
		filled, _ := fieldAt(reflect.ValueOf(probe.WithDefaults()), key)
		if !filled.IsZero() {
			p.fail(key, line, "%v is not a valid value; remove the key to use the default (%v)", describeZero(v), filled.Interface())
		}
	}
}

func describeZero(v reflect.Value) string {
	switch v.Kind() {
	case reflect.String:
		return `""`
	case reflect.Slice:
		return "an empty list"
	}
	return fmt.Sprint(v.Interface())
}

// fieldAt returns the field at a dotted key (without [i] indices).
func fieldAt(v reflect.Value, key string) (reflect.Value, bool) {
	for _, k := range strings.Split(key, ".") {
		if v.Kind() != reflect.Struct {
			return reflect.Value{}, false
		}
		fi, ok := fieldsByTag(v.Type())[k]
		if !ok {
			return reflect.Value{}, false
		}
		v = v.Field(fi)
	}
	return v, true
}

// YAML renders the resolved config (WithDefaults), as written to the run's
// config.yaml: plain values, every key present.
func (c Config) YAML() ([]byte, error) { return yaml.Marshal(c.WithDefaults()) }
