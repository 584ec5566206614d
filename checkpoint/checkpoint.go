package checkpoint

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/checkpoint/safetensors"
	"github.com/vitgo/vit/checkpoint/trainstate"
	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/internal/cfgerr"
	"github.com/vitgo/vit/internal/classnames"
	"github.com/vitgo/vit/internal/memory"
	"github.com/vitgo/vit/internal/strictyaml"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/layers/posembed"
	"github.com/vitgo/vit/memest"
)

// FormatVersion is written as __metadata__["format"] in every model file.
const FormatVersion = "vitgo/1"

// ModelMeta is what a model file's __metadata__ holds besides the tensors:
// the architecture, the data normalization and class names, and where in
// training the weights come from.
type ModelMeta struct {
	Model   layers.Config
	Dataset string    // data.name the model was trained on
	Mean    []float64 // per-channel normalization applied to inputs
	Std     []float64
	Classes []string
	Epoch   int    // completed epochs
	Step    int    // optimizer steps
	Weights string // "raw" or "ema"
	// Precision is the arithmetic of the products the weights were trained
	// with (train.precision), written as "precision"; "" when unknown (a
	// file written before the key, or not by a training run). The tensors
	// are float32 whatever it is. It is a record, not a setting: an
	// evaluation chooses its own precision.
	Precision graph.Precision
}

// metadata renders m as safetensors string metadata: each model key under
// its YAML name (img_size, patch_size, …, as JSON), then the rest.
func (m ModelMeta) metadata() (map[string]string, error) {
	out := map[string]string{"format": FormatVersion}
	var node yaml.Node
	if err := node.Encode(m.Model.WithDefaults()); err != nil {
		return nil, err
	}
	for i := 0; i+1 < len(node.Content); i += 2 {
		var v any
		if err := node.Content[i+1].Decode(&v); err != nil {
			return nil, err
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		out[node.Content[i].Value] = string(b)
	}
	for k, v := range map[string]any{"mean": m.Mean, "std": m.Std, "classes": m.Classes} {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		out[k] = string(b)
	}
	out["dataset"] = m.Dataset
	out["epoch"] = strconv.Itoa(m.Epoch)
	out["step"] = strconv.Itoa(m.Step)
	out["weights"] = m.Weights
	if m.Precision != "" {
		out["precision"] = string(m.Precision)
	}
	return out, nil
}

// ParseModelMeta reads ModelMeta back from a file's metadata. ok is false for
// a file without our format key (a plain timm state_dict).
func ParseModelMeta(md map[string]string) (meta ModelMeta, ok bool, err error) {
	if md["format"] == "" {
		return ModelMeta{}, false, nil
	}
	if md["format"] != FormatVersion {
		return ModelMeta{}, true, fmt.Errorf("metadata format %q, this build reads %q", md["format"], FormatVersion)
	}
	mc := layers.DefaultConfig()
	doc := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	var keys []string
	for _, s := range layerKeys() {
		if v, has := md[s]; has {
			keys = append(keys, s)
			var val yaml.Node
			if err := yaml.Unmarshal([]byte(v), &val); err != nil || len(val.Content) != 1 {
				return ModelMeta{}, true, fmt.Errorf("metadata %s: bad value %q", s, v)
			}
			doc.Content = append(doc.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: s}, val.Content[0])
		}
	}
	// The strict config parser: a bad value is a *ConfigError naming
	// model.<key>, and nothing is allocated from it before Validate below.
	if err := strictyaml.DecodeMapping(&mc, doc, "model"); err != nil {
		cfgerr.Walk(err, func(e *cfgerr.Error) { e.Line = 0 })
		return ModelMeta{}, true, fmt.Errorf("metadata: %w", err)
	}
	meta = ModelMeta{Model: mc, Dataset: md["dataset"], Weights: md["weights"], Precision: graph.Precision(md["precision"])}
	if err := meta.Precision.Validate(); err != nil {
		return ModelMeta{}, true, &MetadataError{Key: "precision", Msg: err.Error()}
	}
	for k, dst := range map[string]any{"mean": &meta.Mean, "std": &meta.Std, "classes": &meta.Classes} {
		if v, has := md[k]; has && v != "" {
			if err := json.Unmarshal([]byte(v), dst); err != nil {
				return ModelMeta{}, true, fmt.Errorf("metadata %s: %w", k, err)
			}
		}
	}
	for k, dst := range map[string]*int{"epoch": &meta.Epoch, "step": &meta.Step} {
		if v, has := md[k]; has && v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				return ModelMeta{}, true, fmt.Errorf("metadata %s: %w", k, err)
			}
			*dst = n
		}
	}
	if err := meta.Model.Validate(); err != nil {
		return ModelMeta{}, true, fmt.Errorf("metadata: %w", err)
	}
	if err := meta.consistent(); err != nil {
		return ModelMeta{}, true, err
	}
	return meta, true, nil
}

// MetadataError is metadata that contradicts itself or the file's tensors:
// loading it would relabel outputs, resample a table it does not describe,
// or fill in names.
type MetadataError struct {
	Key string // the metadata key
	Msg string
}

func (e *MetadataError) Error() string { return fmt.Sprintf("metadata %s: %s", e.Key, e.Msg) }

// consistent checks the metadata against itself: one class name per head
// output, and one mean and std per input channel (or one for all), finite
// in float32 (std positive and normal: inputs are divided by it).
func (m ModelMeta) consistent() error {
	c := m.Model.WithDefaults()
	if n := len(m.Classes); n > 0 && n != c.NumClasses {
		return &MetadataError{Key: "classes", Msg: fmt.Sprintf("%d names for num_classes %d head outputs", n, c.NumClasses)}
	}
	var dup *classnames.DuplicateError
	if errors.As(classnames.Check("the list", m.Classes), &dup) {
		return &MetadataError{Key: "classes", Msg: fmt.Sprintf("the class %q is named twice (head outputs %d and %d, %q and %q): each output needs its own class",
			dup.Name, dup.First, dup.Second, dup.FirstName, dup.Name)}
	}
	for k, v := range map[string][]float64{"mean": m.Mean, "std": m.Std} {
		if len(v) > 1 && len(v) != c.InChans {
			return &MetadataError{Key: k, Msg: fmt.Sprintf("%d values for in_chans %d (want 1 or %d)", len(v), c.InChans, c.InChans)}
		}
		for _, x := range v {
			if math.IsNaN(x) || math.IsInf(x, 0) || math.IsInf(float64(float32(x)), 0) || k == "std" && !cfgerr.PositiveNormal32(x) {
				return &MetadataError{Key: k, Msg: fmt.Sprintf("%v is not a usable value", x)}
			}
		}
	}
	// A pixel in [0, 1] normalised, (x − mean)/std, must stay finite too.
	at := func(v []float64, i int) float64 { return v[min(i, len(v)-1)] }
	for i := range max(len(m.Mean), len(m.Std)) {
		if len(m.Mean) == 0 || len(m.Std) == 0 {
			break
		}
		mu, sd := at(m.Mean, i), at(m.Std, i)
		if q := math.Max(math.Abs(mu), math.Abs(1-mu)) / sd; math.IsInf(float64(float32(q)), 0) {
			return &MetadataError{Key: "mean", Msg: fmt.Sprintf("%v with std %v normalises pixels to about %.3g, beyond float32", mu, sd, q)}
		}
	}
	return nil
}

// CheckTensors checks that every tensor of f that the model of config c
// has is of the shape c gives it: metadata whose img_size, patch_size,
// embed_dim, depth, … contradict the stored tensors is refused before
// anything is allocated from it.
func CheckTensors(f *safetensors.File, c layers.Config) error {
	for _, p := range layers.ParamShapes(c.WithDefaults()) {
		t, ok := f.Get(p.Name)
		if !ok || slices.Equal(t.Shape, p.Shape) {
			continue
		}
		if p.Name == "patch_embed.proj.weight" && len(t.Shape) == 4 && t.Shape[1] != p.Shape[1] {
			return &MetadataError{Key: "in_chans", Msg: fmt.Sprintf("the metadata says in_chans %d, but %s stores the shape %v: %d input channels",
				p.Shape[1], p.Name, t.Shape, t.Shape[1])}
		}
		return &MetadataError{Key: keyOf(p.Name), Msg: fmt.Sprintf("the metadata gives %s the shape %v, the file stores %v", p.Name, []int(p.Shape), t.Shape)}
	}
	return nil
}

// keyOf names the metadata key that sets the shape of parameter name.
func keyOf(name string) string {
	switch {
	case name == "pos_embed":
		return "img_size"
	case strings.HasPrefix(name, "patch_embed."):
		return "patch_size"
	case strings.HasPrefix(name, "head."):
		return "num_classes"
	}
	return "embed_dim"
}

func layerKeys() []string {
	var node yaml.Node
	c := layers.DefaultConfig()
	c.Distilled = true // every key, those omitted when false included
	_ = node.Encode(c)
	var keys []string
	for i := 0; i+1 < len(node.Content); i += 2 {
		keys = append(keys, node.Content[i].Value)
	}
	return keys
}

// SaveModel writes the model's parameters, float32 under timm's names, with
// meta, atomically to path. values, if not nil, replaces the parameters'
// own data by name (to save EMA weights).
func SaveModel(path string, m *layers.VisionTransformer, meta ModelMeta, values map[string][]float32) error {
	if err := m.CheckFloatWeights(); err != nil { // a serving model that kept only packed weights
		return fmt.Errorf("save %s: %w", path, err)
	}
	meta.Model = m.Config
	md, err := meta.metadata()
	if err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	var ts []safetensors.Tensor
	for _, p := range m.Params {
		v, ok := values[p.Name]
		if !ok {
			v = float32s(p.Value)
		}
		ts = append(ts, safetensors.Float32View(p.Name, p.Shape, v))
	}
	if err := safetensors.Write(path, ts, md); err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	return nil
}

// float32s returns a float32 copy (or view, for float32) of t's data.
func float32s(t *tensor.Dense) []float32 {
	switch d := t.Data().(type) {
	case []float32:
		return d
	case []float64:
		out := make([]float32, len(d))
		for i, v := range d {
			out[i] = float32(v)
		}
		return out
	}
	return nil
}

// LoadOptions says how LoadWeights may adapt a file to the model.
type LoadOptions struct {
	// Interp resamples pos_embed when the patch grid differs ("bicubic" or
	// "bilinear"; "" means bicubic). Set NoResample to make a grid change an
	// error instead.
	Interp     string
	NoResample bool
	// ResetHead keeps the model's own (re-initialised) head (and a
	// distilled model's head_dist) instead of the file's; a head whose class
	// count differs is then not an error.
	ResetHead bool
	// OldGrid is the file's patch grid, when known from its metadata; else it
	// is inferred from a square pos_embed.
	OldGrid [2]int
}

// DTypeError is a model tensor whose element type LoadWeights does not
// convert to float32 (anything but F32, F16, BF16 and F64), or an F64 tensor
// holding a finite value beyond float32's range. The caller's wrapping names
// the file.
type DTypeError struct {
	Tensor string
	DType  safetensors.DType
	Why    string
}

func (e *DTypeError) Error() string {
	return fmt.Sprintf("tensor %s has dtype %s: %s", e.Tensor, e.DType, e.Why)
}

// loadDTypes are the element types a model file's tensors may have, and
// how they become float32: F16 and BF16 exactly (every F16 value, the
// subnormals, ±Inf and NaN included, is a float32; BF16 is the top half of
// one), F64 rounded to nearest, ties to even, as torch's load_state_dict
// into a float32 model does.
var loadDTypes = map[safetensors.DType]string{
	safetensors.F32: "", safetensors.F16: "exactly", safetensors.BF16: "exactly", safetensors.F64: "rounded to nearest",
}

// checkDType reports a tensor LoadWeights does not convert, as a
// *DTypeError; v is its float32 conversion when it has one.
func checkDType(t safetensors.Tensor, v []float32) error {
	if _, ok := loadDTypes[t.DType]; !ok {
		return &DTypeError{Tensor: t.Name, DType: t.DType, Why: "model weights must be F32, F16, BF16 or F64"}
	}
	if t.DType != safetensors.F64 {
		return nil
	}
	for i, x := range v {
		if math.IsInf(float64(x), 0) {
			if d := math.Float64frombits(binary.LittleEndian.Uint64(t.Data[8*i:])); !math.IsInf(d, 0) {
				return &DTypeError{Tensor: t.Name, DType: t.DType, Why: fmt.Sprintf("element %d, %g, is beyond float32's range", i, d)}
			}
		}
	}
	return nil
}

// LoadWeights copies a file's tensors into the model by name, converting
// F16 and BF16 exactly and F64 rounded to nearest (see loadDTypes); another
// dtype is a *DTypeError naming the tensor. Missing or unexpected tensors
// and shape mismatches are one error listing every problem. It returns
// notes on what was adapted (a resampled pos_embed, a reset head, a
// conversion from another dtype).
func LoadWeights(m *layers.VisionTransformer, f *safetensors.File, opts LoadOptions) ([]string, error) {
	if err := m.CheckFloatWeights(); err != nil {
		return nil, err
	}
	var problems, notes []string
	for _, p := range m.Params {
		if t, ok := f.Get(p.Name); ok {
			if _, ok := loadDTypes[t.DType]; !ok {
				return nil, checkDType(t, nil)
			}
		}
	}
	converted := map[safetensors.DType]int{}
	seen := map[string]bool{}
	for _, p := range m.Params {
		t, ok := f.Get(p.Name)
		seen[p.Name] = true
		if layers.IsHead(p.Name) && opts.ResetHead {
			notes = append(notes, p.Name+" re-initialised (reset_head)")
			continue
		}
		if !ok {
			problems = append(problems, fmt.Sprintf("missing %s %v", p.Name, []int(p.Shape)))
			continue
		}
		v, err := t.Float32()
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		if err := checkDType(t, v); err != nil {
			return nil, err
		}
		if t.DType != safetensors.F32 {
			converted[t.DType]++
		}
		if !slices.Equal(t.Shape, []int(p.Shape)) {
			if p.Name == "pos_embed" && !opts.NoResample && len(t.Shape) == 3 && t.Shape[0] == 1 && t.Shape[2] == p.Shape[2] {
				rv, note, err := resamplePos(v, t.Shape, m.Config, opts)
				if err != nil {
					problems = append(problems, err.Error())
					continue
				}
				v = rv
				notes = append(notes, note)
			} else {
				msg := fmt.Sprintf("shape mismatch %s: model %v, file %v", p.Name, []int(p.Shape), t.Shape)
				if p.Name == "patch_embed.proj.weight" && len(t.Shape) == 4 && t.Shape[1] != p.Shape[1] {
					msg += fmt.Sprintf(" (a different in_chans: the model has %d input channels, the file %d)", p.Shape[1], t.Shape[1])
				} else if p.Name == "patch_embed.proj.weight" && len(t.Shape) == 4 && t.Shape[2] != p.Shape[2] {
					msg += " (a different patch size: projection weights do not resample)"
				}
				problems = append(problems, msg)
				continue
			}
		}
		setData(p.Value, v)
	}
	for _, n := range f.Names() {
		if !seen[n] {
			problems = append(problems, "unexpected "+n)
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return nil, errors.New("weights do not fit the model:\n  " + strings.Join(problems, "\n  "))
	}
	for _, dt := range []safetensors.DType{safetensors.F16, safetensors.BF16, safetensors.F64} {
		if n := converted[dt]; n > 0 {
			notes = append(notes, fmt.Sprintf("%d tensors converted from %s to float32 (%s)", n, dt, loadDTypes[dt]))
		}
	}
	return notes, nil
}

func setData(t *tensor.Dense, v []float32) {
	switch d := t.Data().(type) {
	case []float32:
		copy(d, v)
	case []float64:
		for i := range d {
			d[i] = float64(v[i])
		}
	}
}

// resamplePos resizes a (1, K+gh·gw, D) table to the model's grid, K being
// the model's prefix tokens (class token, and a distilled model's
// distillation token), whose rows are kept as they are (timm's
// resample_abs_pos_embed with num_prefix_tokens=K).
func resamplePos(v []float32, shape []int, c layers.Config, opts LoadOptions) ([]float32, string, error) {
	k := c.NumPrefixTokens()
	n := shape[1] - k
	gh, gw := opts.OldGrid[0], opts.OldGrid[1]
	if gh*gw != n {
		s := isqrt(n)
		if s*s != n {
			return nil, "", fmt.Errorf("pos_embed: %d patch rows are not a square grid and the file names no grid", n)
		}
		gh, gw = s, s
	}
	nh, nw := c.Grid()
	interp := opts.Interp
	if interp == "" {
		interp = "bicubic"
	}
	mode, err := posembed.ParseMode(interp)
	if err != nil {
		return nil, "", err
	}
	out, err := posembed.Resample(v, shape[2], k, gh, gw, nh, nw, posembed.Options{Mode: mode, Antialias: nh < gh || nw < gw})
	if err != nil {
		return nil, "", fmt.Errorf("pos_embed: %w", err)
	}
	return out, fmt.Sprintf("pos_embed resampled %dx%d → %dx%d (%s)", gh, gw, nh, nw, mode), nil
}

func isqrt(n int) int {
	s := 0
	for (s+1)*(s+1) <= n {
		s++
	}
	return s
}

// ReadModel opens a model file and parses its metadata; hasMeta is false for
// a plain state_dict.
func ReadModel(path string) (*safetensors.File, ModelMeta, bool, error) {
	f, err := safetensors.ReadFile(path)
	if err != nil {
		return nil, ModelMeta{}, false, err
	}
	return withMeta(path, f)
}

// ReadModelSHA256 is ReadModel that also returns the hex SHA-256 digest of
// the bytes it parsed, read from the one open (safetensors.ReadFileSHA256).
func ReadModelSHA256(path string) (*safetensors.File, ModelMeta, bool, string, error) {
	f, sum, err := safetensors.ReadFileSHA256(path)
	if err != nil {
		return nil, ModelMeta{}, false, "", err
	}
	f, meta, ok, err := withMeta(path, f)
	return f, meta, ok, sum, err
}

// withMeta parses the model metadata of f, read from path.
func withMeta(path string, f *safetensors.File) (*safetensors.File, ModelMeta, bool, error) {
	meta, ok, err := ParseModelMeta(f.Metadata)
	if err != nil {
		return nil, ModelMeta{}, false, fmt.Errorf("%s: %w", path, err)
	}
	return f, meta, ok, nil
}

// LoadModel rebuilds a model from one of our model files, with the
// architecture from its metadata, optionally at another image size
// (pos_embed resampled with interp).
func LoadModel(path string, dt tensor.Dtype, imgSize *layers.Size2, interp string) (*layers.VisionTransformer, ModelMeta, []string, error) {
	f, meta, ok, err := ReadModel(path)
	if err != nil {
		return nil, ModelMeta{}, nil, err
	}
	if !ok {
		return nil, ModelMeta{}, nil, fmt.Errorf("%s: no model metadata (a plain state_dict); use it through finetune.init_from with a model section", path)
	}
	if err := CheckTensors(f, meta.Model); err != nil {
		return nil, ModelMeta{}, nil, fmt.Errorf("%s: %w", path, err)
	}
	cfg := meta.Model
	oldH, oldW := cfg.Grid()
	if imgSize != nil {
		cfg.ImgSize = *imgSize
		if err := cfg.Validate(); err != nil {
			return nil, ModelMeta{}, nil, fmt.Errorf("%s at image size %v: %w", path, *imgSize, err)
		}
	}
	// The metadata is validated (ParseModelMeta); check that the weights and
	// one image's activations fit before allocating them.
	if err := memory.CheckMachine(memest.Load(cfg.WithDefaults())); err != nil {
		return nil, ModelMeta{}, nil, fmt.Errorf("%s: %w", path, err)
	}
	m, err := layers.New(cfg, dt, 0)
	if err != nil {
		return nil, ModelMeta{}, nil, fmt.Errorf("%s: %w", path, err)
	}
	notes, err := LoadWeights(m, f, LoadOptions{Interp: interp, OldGrid: [2]int{oldH, oldW}})
	if err != nil {
		return nil, ModelMeta{}, nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, meta, notes, nil
}

// StateFileFor is the training-state file written beside the model file
// path: last.safetensors → last.train.safetensors.
func StateFileFor(path string) string { return trainstate.PathFor(path) }

// EMAError is a failure to load the EMA weights from a training-state file.
type EMAError struct {
	State string // the training-state file
	Err   error
}

func (e *EMAError) Error() string { return fmt.Sprintf("EMA weights from %s: %v", e.State, e.Err) }
func (e *EMAError) Unwrap() error { return e.Err }

// LoadEMA swaps into m the EMA weights ("ema.<param>") of the
// training-state file written beside the model file path (StateFileFor).
// When m is at another image size than the file (LoadModel's imgSize), the
// EMA's pos_embed is resampled from opts.OldGrid exactly as LoadWeights
// resamples the plain weights' (opts.Interp; opts.NoResample makes it an
// error). Its errors are *EMAError.
func LoadEMA(m *layers.VisionTransformer, path string, opts LoadOptions) error {
	state := StateFileFor(path)
	if err := m.CheckFloatWeights(); err != nil {
		return &EMAError{State: state, Err: err}
	}
	ema, err := trainstate.ReadEMA(state)
	if err != nil {
		return &EMAError{State: state, Err: err}
	}
	for _, p := range m.Params {
		v, ok := ema[p.Name]
		if !ok {
			return &EMAError{State: state, Err: fmt.Errorf("holds no EMA weights (ema.%s)", p.Name)}
		}
		// The state file stores each tensor flat: pos_embed is (1, rows, D)
		// with the model's D.
		if d := p.Shape[len(p.Shape)-1]; p.Name == "pos_embed" && !opts.NoResample && len(v) != p.Shape.TotalSize() && len(v)%d == 0 {
			rv, _, err := resamplePos(v, []int{1, len(v) / d, d}, m.Config, opts)
			if err != nil {
				return &EMAError{State: state, Err: fmt.Errorf("ema.%w", err)}
			}
			v = rv
		}
		if len(v) != p.Shape.TotalSize() {
			return &EMAError{State: state, Err: fmt.Errorf("ema.%s has %d values, the model %v", p.Name, len(v), []int(p.Shape))}
		}
		copy(p.Value.Data().([]float32), v)
	}
	return nil
}
