// Package trainstate owns the training-state file, the sibling of a model
// file that a run resumes from (last.safetensors → last.train.safetensors):
// its name, its format tag, and the names of its tensors. train writes and
// reads it whole ([Write], [Read]); checkpoint reads its EMA weights
// ([ReadEMA]). Both go through this package, so the layout is written down
// once.
//
// The file is a safetensors file. Its tensors, each stored flat, are
//
//	optim.<slot>.<param>  the optimizer's slot buffers (AdamW's "m" and "v",
//	                      SGD's "momentum_buffer", Lamb's "exp_avg" and
//	                      "exp_avg_sq"), one per trainable parameter
//	ema.<param>           the EMA weights, when the run keeps an EMA
//	model.<param>         the raw model weights at the file's step
//
// and its metadata holds "format" ([Format]) beside the run's counters and
// resolved config, which belong to the trainer. A slot name holds no dot;
// a parameter name may.
package trainstate

import (
	"fmt"
	"sort"
	"strings"

	"github.com/vitgo/vit/checkpoint/safetensors"
)

// Format is the training-state file's "format" metadata: the model files'
// format version (checkpoint.FormatVersion) with "/train".
const Format = "vitgo/1/train"

// The tensor name prefixes.
const (
	optimPrefix = "optim."
	emaPrefix   = "ema."
	modelPrefix = "model."
)

// PathFor is the training-state file written beside the model file
// modelPath: last.safetensors → last.train.safetensors.
func PathFor(modelPath string) string {
	return strings.TrimSuffix(modelPath, ".safetensors") + ".train.safetensors"
}

// File is a training-state file's contents.
type File struct {
	// Metadata is the file's metadata other than "format": the trainer's
	// counters and config.
	Metadata map[string]string
	// Slots are the optimizer's buffers: slot → parameter → buffer. Read
	// returns an empty map when the file holds none.
	Slots map[string]map[string][]float32
	// EMA and Weights are the EMA weights and the model weights by
	// parameter name; nil when the file holds none.
	EMA, Weights map[string][]float32
}

// FormatError is returned by Read and ReadEMA for a file whose "format"
// metadata is not [Format]: not a training-state file of this build.
type FormatError struct {
	Path, Got string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("%s: format %q, want %q", e.Path, e.Got, Format)
}

// TensorError is returned by Read for a tensor whose name fits none of
// the file's prefixes.
type TensorError struct {
	Path, Name string
}

func (e *TensorError) Error() string {
	return fmt.Sprintf("%s: unexpected tensor %s", e.Path, e.Name)
}

// Write writes f atomically to path, with "format" set to [Format]. A slot
// name that is empty or holds a dot is an error.
func Write(path string, f File) error {
	md := make(map[string]string, len(f.Metadata)+1)
	for k, v := range f.Metadata {
		md[k] = v
	}
	md["format"] = Format
	var ts []safetensors.Tensor
	add := func(prefix string, m map[string][]float32) {
		for _, n := range sortedKeys(m) {
			ts = append(ts, safetensors.Float32View(prefix+n, []int{len(m[n])}, m[n]))
		}
	}
	slots := make([]string, 0, len(f.Slots))
	for slot := range f.Slots {
		if slot == "" || strings.Contains(slot, ".") {
			return fmt.Errorf("save state %s: optimizer slot %q: want a name without dots", path, slot)
		}
		slots = append(slots, slot)
	}
	sort.Strings(slots)
	for _, slot := range slots {
		add(optimPrefix+slot+".", f.Slots[slot])
	}
	add(emaPrefix, f.EMA)
	add(modelPrefix, f.Weights)
	if err := safetensors.Write(path, ts, md); err != nil {
		return fmt.Errorf("save state %s: %w", path, err)
	}
	return nil
}

// Read reads a file written by [Write]. Its errors name path; a wrong
// format is a *FormatError, a tensor of no known kind a *TensorError.
func Read(path string) (File, error) {
	f, err := open(path)
	if err != nil {
		return File{}, err
	}
	out := File{Metadata: make(map[string]string, len(f.Metadata)), Slots: map[string]map[string][]float32{}}
	for k, v := range f.Metadata {
		if k != "format" {
			out.Metadata[k] = v
		}
	}
	for _, t := range f.Tensors {
		v, err := t.Float32()
		if err != nil {
			return File{}, fmt.Errorf("load state %s: %w", path, err)
		}
		switch {
		case strings.HasPrefix(t.Name, optimPrefix):
			slot, param, ok := strings.Cut(strings.TrimPrefix(t.Name, optimPrefix), ".")
			if !ok || slot == "" || param == "" {
				return File{}, &TensorError{Path: path, Name: t.Name}
			}
			if out.Slots[slot] == nil {
				out.Slots[slot] = map[string][]float32{}
			}
			out.Slots[slot][param] = v
		case strings.HasPrefix(t.Name, emaPrefix):
			out.EMA = put(out.EMA, strings.TrimPrefix(t.Name, emaPrefix), v)
		case strings.HasPrefix(t.Name, modelPrefix):
			out.Weights = put(out.Weights, strings.TrimPrefix(t.Name, modelPrefix), v)
		default:
			return File{}, &TensorError{Path: path, Name: t.Name}
		}
	}
	return out, nil
}

// ReadEMA reads the EMA weights of the training-state file at path (nil
// when it holds none), converting no other tensor. It reads the tensors
// whatever the file's format says, as the evaluator always has.
func ReadEMA(path string) (map[string][]float32, error) {
	f, err := safetensors.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var ema map[string][]float32
	for _, t := range f.Tensors {
		if !strings.HasPrefix(t.Name, emaPrefix) {
			continue
		}
		v, err := t.Float32()
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, t.Name, err)
		}
		ema = put(ema, strings.TrimPrefix(t.Name, emaPrefix), v)
	}
	return ema, nil
}

// open reads the safetensors file at path and checks its format.
func open(path string) (*safetensors.File, error) {
	f, err := safetensors.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load state: %w", err)
	}
	if got := f.Metadata["format"]; got != Format {
		return nil, &FormatError{Path: path, Got: got}
	}
	return f, nil
}

func put(m map[string][]float32, k string, v []float32) map[string][]float32 {
	if m == nil {
		m = map[string][]float32{}
	}
	m[k] = v
	return m
}

func sortedKeys(m map[string][]float32) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
