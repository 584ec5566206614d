package strictyaml

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/vitgo/vit/internal/cfgerr"
	"github.com/vitgo/vit/internal/cfgerr/cfgerrtest"
	"github.com/vitgo/vit/internal/optional"
)

// mode is a string enum with a validator, as the configs' typed options.
type mode string

func (m mode) Validate() error {
	if m != "a" && m != "b" {
		return fmt.Errorf(`must be "a" or "b", got %q`, string(m))
	}
	return nil
}

// testConfig is a small schema with one of every field kind the parser takes.
type testConfig struct {
	Net struct {
		Depth int            `yaml:"depth"` // 0 = 4
		Rate  float64        `yaml:"rate"`  // 0 = 0.5
		Bias  bool           `yaml:"bias"`
		Clip  optional.Float `yaml:"clip"` // unset = 1; an explicit 0 is a setting
		Mode  mode           `yaml:"mode"` // "" = a
		Sizes []int          `yaml:"sizes"`
	} `yaml:"net"`
	Run struct {
		Seed uint64 `yaml:"seed"`
		Out  string `yaml:"out"` // "" = out
	} `yaml:"run"`
}

func defaults() testConfig {
	var c testConfig
	c.Net.Depth, c.Net.Rate, c.Net.Mode, c.Run.Out = 4, 0.5, "a", "out"
	return c
}

func fill(c testConfig) testConfig {
	d := defaults()
	if c.Net.Depth == 0 {
		c.Net.Depth = d.Net.Depth
	}
	if c.Net.Rate == 0 {
		c.Net.Rate = d.Net.Rate
	}
	if c.Net.Mode == "" {
		c.Net.Mode = d.Net.Mode
	}
	if c.Run.Out == "" {
		c.Run.Out = d.Run.Out
	}
	c.Net.Clip = c.Net.Clip.Or(optional.FloatOf(1))
	return c
}

var schema = Schema[testConfig]{Default: defaults, Fill: fill}

// TestParseStrict: each malformed document or override is refused with a
// *cfgerr.Error naming the key and, for keys in the file, the line; errors
// of the document as a whole are not cfgerr.Errors; an override's errors
// are *OverrideError.
func TestParseStrict(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		sets       []string
		key        string // the cfgerr.Error's key; "" = no error
		line       int    // its line; -1 = not a cfgerr.Error (document-level)
	}{
		{"empty", "", nil, "", 0},
		{"all kinds", "net:\n  depth: 2\n  rate: 1e-3\n  bias: true\n  clip: 0\n  mode: b\n  sizes: [1, 2]\nrun:\n  seed: 7\n", nil, "", 0},
		{"unknown key", "net:\n  depht: 2\n", nil, "net.depht", 2},
		{"unknown section", "nett:\n  depth: 2\n", nil, "nett", 1},
		{"bad type", "net:\n  depth: two\n", nil, "net.depth", 2},
		{"fraction into an int", "net:\n  depth: 16.7\n", nil, "net.depth", 2},
		{"yes is not a bool", "net:\n  bias: yes\n", nil, "net.bias", 2},
		{"negative uint", "run:\n  seed: -1\n", nil, "run.seed", 2},
		{"empty value", "net:\n  depth:\n", nil, "net.depth", 2},
		{"empty optional", "net:\n  clip:\n", nil, "net.clip", 2},
		{"explicit zero that means default", "net:\n  rate: 0\n", nil, "net.rate", 2},
		{"explicit empty string that means default", "run:\n  out: \"\"\n", nil, "run.out", 2},
		{"enum validated", "net:\n  mode: c\n", nil, "net.mode", 2},
		{"list element", "net:\n  sizes: [1, x]\n", nil, "net.sizes[1]", 2},
		{"list not a list", "net:\n  sizes: 3\n", nil, "net.sizes", 2},
		{"section not a mapping", "net: 3\n", nil, "net", 1},
		{"string not a scalar", "run:\n  out: [a]\n", nil, "run.out", 2},
		{"repeated key", "net:\n  depth: 2\n  depth: 3\n", nil, "net.depth", 3},
		{"alias", "net:\n  rate: &a 0.1\n  clip: *a\n", nil, "net.rate", 2},
		{"non-scalar key", "net:\n  [a]: 1\n", nil, "net.?", 2},
		{"second document", "net:\n  depth: 2\n---\nnet:\n  depth: 3\n", nil, "", -1},
		{"not a mapping", "- 1\n- 2\n", nil, "", -1},
		{"set ok", "", []string{"net.depth=3", "net.sizes=[4, 5]", "run.seed=9"}, "", 0},
		{"set section", "", []string{"net={depth: 3, rate: 0.1}"}, "", 0},
		{"set explicit zero setting", "", []string{"net.clip=0", "net.bias=false"}, "", 0},
		{"set empty", "net:\n  depth: 2\n", []string{"net.depth="}, "net.depth", 0},
		{"set unknown", "", []string{"net.width=1"}, "net.width", 0},
		{"set into a value", "", []string{"net.clip.v=1"}, "net.clip", 0},
		{"set typed", "", []string{"net.depth=many"}, "net.depth", 0},
		{"set two documents", "", []string{"net.depth=1\n---\n2"}, "net.depth", 0},
		{"set zero that means default", "", []string{"net.rate=0"}, "net.rate", 0},
		{"set malformed", "", []string{"net.depth"}, "", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := schema.Parse([]byte(tc.yaml), tc.sets)
			if e := cfgerrtest.Check(err, tc.key, tc.line); e != nil {
				t.Fatal(e)
			}
			if tc.key == "" {
				return
			}
			var oe *OverrideError
			// An explicit zero is refused after the overrides, as in a file.
			if fromSet := len(tc.sets) > 0 && !strings.Contains(tc.name, "zero"); errors.As(err, &oe) != fromSet {
				t.Fatalf("error %v: an *OverrideError is %v, want %v", err, !fromSet, fromSet)
			}
		})
	}
}

// TestParseValues: the values land in their fields, overrides apply in
// order after the file, and lines record where each key was (0 for an
// override).
func TestParseValues(t *testing.T) {
	got, lines, err := schema.Parse([]byte("net:\n  depth: 2\n  clip: 0\n  sizes: [1, 2]\nrun:\n  seed: 1000\n"),
		[]string{"net.depth=5", "net.depth=6", "run.out=x"})
	if err != nil {
		t.Fatal(err)
	}
	want := defaults()
	want.Net.Depth, want.Net.Clip, want.Net.Sizes, want.Run.Seed, want.Run.Out = 6, optional.FloatOf(0), []int{1, 2}, 1000, "x"
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	for key, line := range map[string]int{"net": 1, "net.clip": 3, "net.depth": 0, "run.seed": 6, "run.out": 0} {
		if l, ok := lines[key]; !ok || l != line {
			t.Errorf("line of %s: %d (present %v), want %d", key, l, ok, line)
		}
	}
}

// TestErrorsCapped: past MaxReported errors the rest are counted, not
// listed.
func TestErrorsCapped(t *testing.T) {
	var b strings.Builder
	b.WriteString("net:\n")
	for i := range 3 * MaxReported {
		fmt.Fprintf(&b, "  k%d: 1\n", i)
	}
	_, _, err := schema.Parse([]byte(b.String()), nil)
	var ce *cfgerr.Error
	if !errors.As(err, &ce) || ce.Key != "net.k0" || ce.Line != 2 {
		t.Fatalf("first error %v, want net.k0 at line 2", err)
	}
	if n := strings.Count(err.Error(), "unknown key"); n != MaxReported {
		t.Errorf("%d errors listed, want %d", n, MaxReported)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("and %d more errors", 2*MaxReported)) {
		t.Errorf("the rest are not counted: %.300s", err)
	}
}

// TestDecodeMapping: a mapping node decodes into a struct strictly, its
// keys named under the prefix.
func TestDecodeMapping(t *testing.T) {
	var n yaml.Node
	if err := yaml.Unmarshal([]byte("depth: 3\nmode: x\n"), &n); err != nil {
		t.Fatal(err)
	}
	c := defaults()
	err := DecodeMapping(&c.Net, n.Content[0], "net")
	var ce *cfgerr.Error
	if !errors.As(err, &ce) || ce.Key != "net.mode" {
		t.Fatalf("error %v: want a cfgerr.Error for net.mode", err)
	}
	if c.Net.Depth != 3 {
		t.Errorf("depth %d, want 3", c.Net.Depth)
	}
}

// FuzzParse: the parser never panics, and what it accepts marshals and
// parses back to the same value.
func FuzzParse(f *testing.F) {
	f.Add([]byte("net:\n  depth: 2\n  sizes: [1]\n"), "run.seed=3")
	f.Add([]byte("net: &a {depth: 2}\nrun: *a\n"), "net.clip=0")
	f.Fuzz(func(t *testing.T, src []byte, sets string) {
		var overrides []string
		if sets != "" {
			overrides = strings.Split(sets, "\n")
		}
		c, _, err := schema.Parse(src, overrides)
		if err != nil {
			return
		}
		b, err := yaml.Marshal(fill(c))
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		back, _, err := schema.Parse(b, nil)
		if err != nil {
			t.Fatalf("the filled value does not parse back: %v\n%s", err, b)
		}
		if !reflect.DeepEqual(back, fill(c)) {
			t.Fatalf("round trip changed the value:\n%+v\n%+v", fill(c), back)
		}
	})
}
