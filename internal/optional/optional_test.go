package optional

import (
	"fmt"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestFloatYAML: a number, 0 included, decodes to a set Float; anything else
// is an error; a set Float encodes as the plain number, an unset one as null.
func TestFloatYAML(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want Float
		ok   bool
	}{
		{"0", FloatOf(0), true},
		{"0.0", FloatOf(0), true},
		{"1e-6", FloatOf(1e-6), true},
		{"3", FloatOf(3), true},
		{"-0.5", FloatOf(-0.5), true},
		{`"1"`, Float{}, false},
		{"yes", Float{}, false},
		{"true", Float{}, false},
		{"[1]", Float{}, false},
	} {
		var f Float
		err := yaml.Unmarshal([]byte(tc.src), &f)
		if (err == nil) != tc.ok || f != tc.want {
			t.Errorf("%s: got %v (set %v), err %v; want %v, ok %v", tc.src, f, f.IsSet(), err, tc.want, tc.ok)
		}
	}
	for _, tc := range []struct {
		f    Float
		want string
	}{{FloatOf(0), "0\n"}, {FloatOf(1e-5), "1e-05\n"}, {FloatOf(0.5), "0.5\n"}, {Float{}, "null\n"}} {
		if b, err := yaml.Marshal(tc.f); err != nil || string(b) != tc.want {
			t.Errorf("Marshal(%v) = %q, %v; want %q", tc.f, b, err, tc.want)
		}
	}
}

// TestBoolYAML: true and false decode to a set Bool; YAML 1.1 spellings and
// numbers are errors; a set Bool encodes as the plain boolean.
func TestBoolYAML(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want Bool
		ok   bool
	}{
		{"false", BoolOf(false), true},
		{"true", BoolOf(true), true},
		{"yes", Bool{}, false},
		{"off", Bool{}, false},
		{"0", Bool{}, false},
		{`"true"`, Bool{}, false},
	} {
		var b Bool
		err := yaml.Unmarshal([]byte(tc.src), &b)
		if (err == nil) != tc.ok || b != tc.want {
			t.Errorf("%s: got %v (set %v), err %v; want %v, ok %v", tc.src, b, b.IsSet(), err, tc.want, tc.ok)
		}
	}
	for _, tc := range []struct {
		b    Bool
		want string
	}{{BoolOf(false), "false\n"}, {BoolOf(true), "true\n"}, {Bool{}, "null\n"}} {
		if out, err := yaml.Marshal(tc.b); err != nil || string(out) != tc.want {
			t.Errorf("Marshal(%v) = %q, %v; want %q", tc.b, out, err, tc.want)
		}
	}
	for b, want := range map[Bool]string{BoolOf(false): "false", BoolOf(true): "true", {}: "unset"} {
		if got := b.String(); got != want {
			t.Errorf("String() = %q, want %q", got, want)
		}
	}
}

// TestOr: Or keeps a set value, 0 and false included, and replaces only an
// unset one.
func TestOr(t *testing.T) {
	def := FloatOf(1)
	if got := (Float{}).Or(def); got != def {
		t.Errorf("unset.Or(1) = %v", got)
	}
	if got := FloatOf(0).Or(def); got != FloatOf(0) {
		t.Errorf("FloatOf(0).Or(1) = %v", got)
	}
	if got := (Bool{}).Or(BoolOf(true)); got != BoolOf(true) {
		t.Errorf("unset.Or(true) = %v", got)
	}
	if got := BoolOf(false).Or(BoolOf(true)); got != BoolOf(false) {
		t.Errorf("BoolOf(false).Or(true) = %v", got)
	}
}

// A section's zero value leaves clip_grad unset, which WithDefaults reads
// as the default; an explicit 0 (in Go or in YAML) is kept.
func Example() {
	type section struct {
		ClipGrad Float `yaml:"clip_grad"`
	}
	def := FloatOf(1)
	var zero, off, fromYAML section
	off.ClipGrad.Set(0)
	_ = yaml.Unmarshal([]byte("clip_grad: 0"), &fromYAML)
	for _, s := range []section{zero, off, fromYAML} {
		out, _ := yaml.Marshal(section{ClipGrad: s.ClipGrad.Or(def)})
		fmt.Printf("%v → %s", s.ClipGrad, out)
	}
	// Output:
	// unset → clip_grad: 1
	// 0 → clip_grad: 0
	// 0 → clip_grad: 0
}
