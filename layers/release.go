package layers

import (
	"fmt"
	"slices"
	"strings"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/graph"
)

// A serving model whose Frozen graphs are all built, or are all to be built
// in one precision, need not keep a float copy of the weights those graphs
// read packed: ReleaseFloatWeights drops it. An int8 model then holds each
// quantized Linear weight once, as int8 integers with per-channel scales
// (kernels.PackedInt8), and the head's once, as float32 panels; everything
// int8 does not cover (the class token, the position table, a conv patch
// embedding, the LayerNorms and the biases) stays in Params as before.
// Every later Frozen graph of a precision already packed — another lane,
// another batch size, Features, a distilled model's two heads — reads the
// one packed copy; anything else that needs the float weights (a training,
// evaluation or NoMaps graph, a Frozen graph of another precision, saving
// the model, loading weights into it, swapping EMA weights in) is refused
// with *ReleasedError.

// ReleasedError refuses a use of the float weights of a parameter that
// ReleaseFloatWeights released.
type ReleasedError struct {
	Name string            // the released parameter
	Kept []graph.Precision // the precisions whose packed weights the model holds
}

func (e *ReleasedError) Error() string {
	kept := make([]string, len(e.Kept))
	for i, p := range e.Kept {
		kept[i] = string(p)
	}
	return fmt.Sprintf("%s: its float weights were released once packed for Frozen %s graphs (ReleaseFloatWeights): only those can be built from this model; load the model again for any other use",
		e.Name, strings.Join(kept, ", "))
}

// ReleaseFloatWeights packs the weights for Frozen graphs of precision prec
// (as the first such Build does) and then drops the float tensor of every
// weight those graphs read packed: its Param.Value becomes nil. See
// ReleasedError for what the model can still do. It must not run
// concurrently with Init, or with a caller's own reads of Params; Build may
// run concurrently with it.
func (m *VisionTransformer) ReleaseFloatWeights(prec graph.Precision) error {
	if err := prec.Validate(); err != nil {
		return fmt.Errorf("release: precision %w", err)
	}
	fz, err := m.frozenWeights(prec.OrDefault())
	if err != nil {
		return err
	}
	m.frozenMu.Lock()
	defer m.frozenMu.Unlock()
	for _, p := range m.Params {
		if fz[p.Name] != nil {
			p.Value = nil
		}
	}
	return nil
}

// CheckFloatWeights returns nil when every parameter holds its float
// tensor, or a *ReleasedError naming the first one released by
// ReleaseFloatWeights.
func (m *VisionTransformer) CheckFloatWeights() error {
	m.frozenMu.Lock()
	defer m.frozenMu.Unlock()
	for _, p := range m.Params {
		if p.Value == nil {
			return m.releasedError(p.Name)
		}
	}
	return nil
}

// releasedError is the refusal of released parameter name; m.frozenMu is
// held.
func (m *VisionTransformer) releasedError(name string) *ReleasedError {
	e := &ReleasedError{Name: name}
	for p := range m.frozen {
		e.Kept = append(e.Kept, p)
	}
	slices.Sort(e.Kept)
	return e
}

// buildValues returns the tensors a graph binds, parallel to Params: nil
// for the weights it reads packed (fz, a Frozen graph's), a *ReleasedError
// for a released weight it would read as a float tensor. A Frozen graph
// thus holds no reference to the float copy of a packed weight, and
// ReleaseFloatWeights frees it even from graphs built before.
func (m *VisionTransformer) buildValues(fz map[string]*graph.PackedWeight) ([]*tensor.Dense, error) {
	m.frozenMu.Lock()
	defer m.frozenMu.Unlock()
	vals := make([]*tensor.Dense, len(m.Params))
	for i, p := range m.Params {
		switch {
		case fz[p.Name] != nil:
		case p.Value == nil:
			return nil, fmt.Errorf("build: %w", m.releasedError(p.Name))
		default:
			vals[i] = p.Value
		}
	}
	return vals, nil
}

// WeightBytes is the memory the model's weights hold: the float tensors
// still in Params and every packed copy its Frozen graphs read (float32 or
// bfloat16 panels; int8 integers with their scales and column sums), each
// counted once however many graphs read it.
func (m *VisionTransformer) WeightBytes() int64 {
	m.frozenMu.Lock()
	defer m.frozenMu.Unlock()
	var n int64
	for _, p := range m.Params {
		if p.Value != nil {
			n += int64(p.Value.MemSize())
		}
	}
	for _, fz := range m.frozen {
		for _, w := range fz {
			n += w.Bytes()
		}
	}
	return n
}
