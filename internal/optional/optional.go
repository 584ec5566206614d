// Package optional holds the config value types for the few keys whose 0
// or false is a setting that differs from their default: clip_grad 0 turns
// clipping off although the default is 1, qkv_bias false drops a bias that
// is on by default. A plain float64 or bool cannot tell "not given" from
// "given as 0", so the config sections' rule "the zero value of a field
// means its default" could not hold for them. These types can: their zero
// value is unset (WithDefaults fills in the default), and a YAML value, a
// -set override or Set makes them set, 0 and false included.
//
// They are small values rather than pointers (*float64) so that copying a
// config copies its settings (no pointee shared between a config and its
// WithDefaults copy, nothing to dereference before defaults are filled),
// and they read and write YAML as the plain scalar, so config files, the
// run's config.yaml, checkpoint metadata and the -resume diff look as they
// did with plain fields.
package optional

import (
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/vitgo/vit/internal/cfgerr"
)

// Opt is a T that records whether it was set. The zero value is unset.
type Opt[T float64 | bool] struct {
	v   T
	set bool
}

// Float is a float64 that records whether it was set (clip_grad, …).
type Float = Opt[float64]

// Bool is a bool that records whether it was set (qkv_bias, …).
type Bool = Opt[bool]

// Of returns a set Opt holding v.
func Of[T float64 | bool](v T) Opt[T] { return Opt[T]{v: v, set: true} }

// FloatOf returns a set Float holding v.
func FloatOf(v float64) Float { return Of(v) }

// BoolOf returns a set Bool holding v.
func BoolOf(v bool) Bool { return Of(v) }

// Value returns the value, 0 or false when unset. The sections'
// WithDefaults set every field, so read it from a resolved config.
func (o Opt[T]) Value() T { return o.v }

// IsSet reports whether a value was given (0 and false included).
func (o Opt[T]) IsSet() bool { return o.set }

// IsZero reports whether o is unset (yaml.v3's IsZeroer), so that a field
// tagged omitempty is left out of the YAML when unset and written, 0 and
// false included, when set.
func (o Opt[T]) IsZero() bool { return !o.set }

// Or returns o when it is set, else def: WithDefaults' step for one field.
func (o Opt[T]) Or(def Opt[T]) Opt[T] {
	if o.set {
		return o
	}
	return def
}

// Set sets the value to v.
func (o *Opt[T]) Set(v T) { *o = Of(v) }

// String formats the value as strconv does ("0.05", "false"), or "unset".
func (o Opt[T]) String() string {
	if !o.set {
		return "unset"
	}
	switch v := any(o.v).(type) {
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	default:
		return strconv.FormatBool(v.(bool))
	}
}

// UnmarshalYAML reads a number (an integer or a float) for a Float, true or
// false for a Bool, and marks o set; anything else (a string, yes, 1 for a
// Bool, a list) is an error.
func (o *Opt[T]) UnmarshalYAML(n *yaml.Node) error {
	var v any
	var err error
	switch any(o.v).(type) {
	case float64:
		v, err = cfgerr.Float(n)
	default:
		v, err = cfgerr.Bool(n)
	}
	if err != nil {
		return err
	}
	o.Set(v.(T))
	return nil
}

// MarshalYAML writes the plain scalar; an unset value is written as null,
// which the config parser refuses, so it cannot be read back as 0 or false.
func (o Opt[T]) MarshalYAML() (any, error) {
	if !o.set {
		return nil, nil
	}
	return o.v, nil
}
