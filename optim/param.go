package optim

import (
	"errors"
	"fmt"
	"strings"
)

// Param is one named parameter: Value is the live weight data (aliasing the
// model's tensor), Grad its gradient for this step. Name is the checkpoint key
// (blocks.3.attn.qkv.weight) and Shape the tensor's shape; len(Value) and
// len(Grad) must both equal the product of Shape.
//
// NoDecay and LayerID are the parameter groups the model supplies, as timm's
// models do with no_weight_decay() and group_matcher: the optimizer knows no
// parameter names.
type Param struct {
	Name  string
	Shape []int
	Value []float32
	Grad  []float32

	// NoDecay exempts the tensor from weight decay (the model's
	// no_weight_decay list). 1-D tensors and biases are exempt anyway; see
	// [NoWeightDecay].
	NoDecay bool
	// LayerID is the tensor's layer for layer-wise lr decay, 0 (the input
	// side) to the model's last layer; see [LayerScale]. Unused when layer
	// decay is off.
	LayerID int
	// Frozen marks a parameter that is not trained (finetune.freeze): AdamW
	// keeps no moments for it and never changes it, not even by weight
	// decay, and its Grad is unused (nil); clipping and the finite checks
	// see an empty gradient. It still counts for the layer ids, so freezing
	// the top layer does not move the others' layer-decay scales, and the
	// EMA still averages it, which keeps its EMA equal to its value.
	Frozen bool
}

// grad is the gradient that clipping and the finite checks see: none for a
// Frozen parameter.
func (p Param) grad() []float32 {
	if p.Frozen {
		return nil
	}
	return p.Grad
}

// trainable returns the parameters that are not Frozen (params itself
// when none is).
func trainable(params []Param) []Param {
	n := 0
	for _, p := range params {
		if !p.Frozen {
			n++
		}
	}
	if n == len(params) {
		return params
	}
	out := make([]Param, 0, n)
	for _, p := range params {
		if !p.Frozen {
			out = append(out, p)
		}
	}
	return out
}

// check reports a parameter whose Value or Grad disagrees with its shape.
func (p Param) check() error {
	if err := p.checkValue(); err != nil {
		return err
	}
	if p.Frozen {
		return nil
	}
	if len(p.Grad) != len(p.Value) {
		return fmt.Errorf("parameter %q: shape %v holds %d values, Grad has %d", p.Name, p.Shape, len(p.Value), len(p.Grad))
	}
	return nil
}

// checkValue reports a parameter without a name or whose Value disagrees
// with its shape.
func (p Param) checkValue() error {
	if p.Name == "" {
		return errors.New("parameter with an empty name")
	}
	if p.LayerID < 0 {
		return fmt.Errorf("parameter %q: negative layer id %d", p.Name, p.LayerID)
	}
	n := 1
	for _, d := range p.Shape {
		if d < 0 {
			return fmt.Errorf("parameter %q: negative dimension in shape %v", p.Name, p.Shape)
		}
		n *= d
	}
	if len(p.Value) != n {
		return fmt.Errorf("parameter %q: shape %v holds %d values, Value has %d", p.Name, p.Shape, n, len(p.Value))
	}
	return nil
}

// NoWeightDecay reports whether the parameter is exempt from weight decay:
// every tensor the model marks NoDecay, every tensor with at most one
// dimension (biases, LayerNorm gains) and every name ending in .bias. This is
// timm's param_groups_weight_decay, with the model's no_weight_decay list
// given as NoDecay.
func NoWeightDecay(p Param) bool {
	return p.NoDecay || len(p.Shape) <= 1 || strings.HasSuffix(p.Name, ".bias")
}
