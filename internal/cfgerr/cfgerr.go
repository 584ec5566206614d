// Package cfgerr is the typed error of config validation: an invalid value
// names its dotted key (model.depth) and, once the YAML parser has seen the
// file, the line the key is on. Callers test for it with errors.As; the
// train package exports it as train.ConfigError.
package cfgerr

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"gopkg.in/yaml.v3"
)

// Error is one invalid config value.
type Error struct {
	Key  string // dotted key, e.g. "train.batch_size" or "optim.betas[1]"
	Line int    // 1-based line in the YAML file; 0 when unknown (a -set override, a Go value)
	Err  error  // what is wrong, without the key
}

// New returns an Error for key with a formatted message.
func New(key, format string, a ...any) *Error {
	return &Error{Key: key, Err: fmt.Errorf(format, a...)}
}

// Error renders "key (line N): message", or "key: message" without a line.
func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s (line %d): %v", e.Key, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Key, e.Err)
}

// Unwrap returns the message's error.
func (e *Error) Unwrap() error { return e.Err }

// List collects Errors for a Validate method; Err joins them (nil when none).
type List []error

// Add appends an Error for key.
func (l *List) Add(key, format string, a ...any) { *l = append(*l, New(key, format, a...)) }

// Err returns the joined errors, or nil.
func (l List) Err() error { return errors.Join(l...) }

// Walk calls f for every *Error inside err, through errors.Join and %w
// wrapping, so a caller can fill in lines or collect keys.
func Walk(err error, f func(*Error)) {
	if err == nil {
		return
	}
	if e, ok := err.(*Error); ok {
		f(e)
		return
	}
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		for _, x := range u.Unwrap() {
			Walk(x, f)
		}
	case interface{ Unwrap() error }:
		Walk(u.Unwrap(), f)
	}
}

// Int decodes a YAML scalar as an int without silent truncation: an
// integer (12, 0x10, 1_000) or a float with an integral value (1e6, 12.0).
// 16.7, "abc", null and values beyond int64 are errors.
func Int(n *yaml.Node) (int, error) {
	if n.Kind != yaml.ScalarNode {
		return 0, fmt.Errorf("want an integer, got a %s", kindName(n.Kind))
	}
	switch n.ShortTag() {
	case "!!int":
		var v int
		if err := n.Decode(&v); err != nil {
			return 0, fmt.Errorf("%q is not an integer that fits in 64 bits", n.Value)
		}
		return v, nil
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return 0, fmt.Errorf("want an integer, got %q", n.Value)
		}
		if f != math.Trunc(f) || math.Abs(f) >= 1<<63 {
			return 0, fmt.Errorf("want an integer, got %s (no silent truncation)", n.Value)
		}
		return int(f), nil
	case "!!null":
		return 0, errors.New("want an integer, got no value")
	}
	return 0, fmt.Errorf("want an integer, got %q", n.Value)
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.AliasNode:
		return "alias"
	}
	return "document"
}

// Float decodes a YAML scalar as a number: an integer or a float (.inf and
// .nan included; Validate bounds them). A string, bool, list or null is an
// error.
func Float(n *yaml.Node) (float64, error) {
	var f float64
	if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!int" && n.ShortTag() != "!!float") || n.Decode(&f) != nil {
		return 0, fmt.Errorf("want a number, got %s", Describe(n))
	}
	return f, nil
}

// Bool decodes a YAML scalar as true or false (YAML 1.2: yes, no, on and
// off are strings, not booleans).
func Bool(n *yaml.Node) (bool, error) {
	var b bool
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&b) != nil {
		return false, fmt.Errorf("want true or false, got %s", Describe(n))
	}
	return b, nil
}

// Describe names a node for an error: its value and YAML type, such as
// `"two" (str)`, or "a mapping", "a list", "an alias".
func Describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	v := n.Value
	if len(v) > 40 {
		v = v[:40] + "…"
	}
	return fmt.Sprintf("%q (%s)", v, strings.TrimPrefix(n.ShortTag(), "!!"))
}

// minNormal32 is the smallest positive normal float32, 2^-126 (about
// 1.18e-38); the float32 values below it are subnormal.
const minNormal32 = 0x1p-126

// PositiveNormal32 reports whether x, rounded to float32, is a positive
// normal finite number: a value that float32 arithmetic may divide by
// without a 0, a subnormal that has lost its digits, or an infinity. Config
// keys that divide (a std, a temperature, an epsilon) are checked with it:
// 1e-40 is a positive float64 but a subnormal float32, and 1e-300 is 0.
func PositiveNormal32(x float64) bool {
	f := float32(x)
	return f >= minNormal32 && f <= math.MaxFloat32
}
