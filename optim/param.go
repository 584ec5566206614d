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
type Param struct {
	Name  string
	Shape []int
	Value []float32
	Grad  []float32
}

// check reports a parameter whose Value or Grad disagrees with its shape.
func (p Param) check() error {
	if err := p.checkValue(); err != nil {
		return err
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
// every tensor with at most one dimension (biases, LayerNorm gains), every
// name ending in .bias, and the names in timm's VisionTransformer.no_weight_decay
// (pos_embed, cls_token, dist_token). This is timm's param_groups_weight_decay
// rule with the ViT's no-decay list.
func NoWeightDecay(name string, shape []int) bool {
	if len(shape) <= 1 || strings.HasSuffix(name, ".bias") {
		return true
	}
	switch name {
	case "pos_embed", "cls_token", "dist_token":
		return true
	}
	return false
}
