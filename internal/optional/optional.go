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

// Float is a float64 that records whether it was set. The zero value is
// unset.
type Float struct {
	v   float64
	set bool
}

// FloatOf returns a set Float holding v.
func FloatOf(v float64) Float { return Float{v: v, set: true} }

// Value returns the value, 0 when unset. The sections' WithDefaults set
// every Float, so read it from a resolved config.
func (f Float) Value() float64 { return f.v }

// IsSet reports whether a value was given (0 included).
func (f Float) IsSet() bool { return f.set }

// Or returns f when it is set, else def: WithDefaults' step for one field.
func (f Float) Or(def Float) Float {
	if f.set {
		return f
	}
	return def
}

// Set sets the value to v.
func (f *Float) Set(v float64) { *f = FloatOf(v) }

// String formats the value as strconv does, or "unset".
func (f Float) String() string {
	if !f.set {
		return "unset"
	}
	return strconv.FormatFloat(f.v, 'g', -1, 64)
}

// UnmarshalYAML reads a number (an integer or a float) and marks f set; a
// string, bool or list is an error.
func (f *Float) UnmarshalYAML(n *yaml.Node) error {
	v, err := cfgerr.Float(n)
	if err != nil {
		return err
	}
	f.Set(v)
	return nil
}

// MarshalYAML writes the plain number; an unset Float is written as null,
// which the config parser refuses, so it cannot be read back as 0.
func (f Float) MarshalYAML() (any, error) {
	if !f.set {
		return nil, nil
	}
	return f.v, nil
}

// Bool is a bool that records whether it was set. The zero value is unset.
type Bool struct {
	v   bool
	set bool
}

// BoolOf returns a set Bool holding v.
func BoolOf(v bool) Bool { return Bool{v: v, set: true} }

// Value returns the value, false when unset. The sections' WithDefaults set
// every Bool, so read it from a resolved config.
func (b Bool) Value() bool { return b.v }

// IsSet reports whether a value was given (false included).
func (b Bool) IsSet() bool { return b.set }

// Or returns b when it is set, else def: WithDefaults' step for one field.
func (b Bool) Or(def Bool) Bool {
	if b.set {
		return b
	}
	return def
}

// Set sets the value to v.
func (b *Bool) Set(v bool) { *b = BoolOf(v) }

// String formats the value as "true" or "false", or "unset".
func (b Bool) String() string {
	if !b.set {
		return "unset"
	}
	return strconv.FormatBool(b.v)
}

// UnmarshalYAML reads true or false and marks b set; anything else (yes,
// 1, a list) is an error.
func (b *Bool) UnmarshalYAML(n *yaml.Node) error {
	v, err := cfgerr.Bool(n)
	if err != nil {
		return err
	}
	b.Set(v)
	return nil
}

// MarshalYAML writes the plain bool; an unset Bool is written as null,
// which the config parser refuses, so it cannot be read back as false.
func (b Bool) MarshalYAML() (any, error) {
	if !b.set {
		return nil, nil
	}
	return b.v, nil
}
