package strictyaml

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/vitgo/vit/internal/cfgerr"
)

// MaxReported caps the errors one parse reports; the rest are counted.
const MaxReported = 20

// Schema is a config type T with defaults: Default returns every field's
// default, and Fill replaces each zero field that means "default" (so that
// Fill(zero T) equals Default()).
type Schema[T any] struct {
	Default func() T
	Fill    func(T) T
}

// Parse decodes src (one YAML document whose top level is a mapping, or an
// empty document) over s.Default(), applies the overrides in order, and
// refuses each present key whose explicit value Fill would replace. lines
// maps every dotted key present to its line in src (0 for an override).
func (s Schema[T]) Parse(src []byte, overrides []string) (v T, lines map[string]int, err error) {
	root, err := parseDocument(src)
	if err != nil {
		return v, nil, err
	}
	v = s.Default()
	p := &parser{lines: map[string]int{}}
	if root != nil {
		p.setValue(reflect.ValueOf(&v).Elem(), root, "")
	}
	for _, o := range overrides {
		p.override(reflect.ValueOf(&v).Elem(), o)
	}
	s.refuseDefaultZeros(p, v)
	if err := p.err(); err != nil {
		var zero T
		return zero, nil, err
	}
	return v, p.lines, nil
}

// DecodeMapping decodes the mapping n into the struct that dst points to,
// its keys named under prefix (model → model.depth), strictly as Parse
// does; the errors carry n's lines.
func DecodeMapping(dst any, n *yaml.Node, prefix string) error {
	p := &parser{lines: map[string]int{}}
	p.setStruct(reflect.ValueOf(dst).Elem(), n, prefix)
	return p.err()
}

// OverrideError is an error in one override (key=value), as given.
type OverrideError struct {
	Override string
	Err      error // a *cfgerr.Error naming the key, or ErrOverrideSyntax
}

func (e *OverrideError) Error() string { return fmt.Sprintf("override %s: %v", e.Override, e.Err) }
func (e *OverrideError) Unwrap() error { return e.Err }

// ErrOverrideSyntax is an override that is not key=value.
var ErrOverrideSyntax = errors.New("want key=value")

// parseDocument decodes exactly one YAML document and returns its top-level
// mapping (nil for an empty file).
func parseDocument(src []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(src))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, err
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		line := next.Line
		if err != nil {
			return nil, fmt.Errorf("a second YAML document is not allowed: %w", err)
		}
		return nil, fmt.Errorf("line %d: a second YAML document (after ---) is not allowed; a config is one document", line)
	}
	if len(doc.Content) != 1 {
		return nil, nil
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		return nil, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: the top level must be a mapping of sections (model:, data:, …)", root.Line)
	}
	return root, nil
}

// parser walks YAML nodes into a schema, recording each present key's line
// and collecting errors.
type parser struct {
	lines   map[string]int // dotted key → line (0 for an override) for every key present
	errs    []error
	dropped int
}

func (p *parser) fail(key string, line int, format string, a ...any) {
	p.add(&cfgerr.Error{Key: key, Line: line, Err: fmt.Errorf(format, a...)})
}

func (p *parser) add(err error) {
	if len(p.errs) >= MaxReported {
		p.dropped++
		return
	}
	p.errs = append(p.errs, err)
}

func (p *parser) err() error {
	if p.dropped > 0 {
		p.errs = append(p.errs, fmt.Errorf("… and %d more errors", p.dropped))
	}
	return errors.Join(p.errs...)
}

// fieldsByTag maps a struct type's YAML keys to field indices.
func fieldsByTag(t reflect.Type) map[string]int {
	m := make(map[string]int, t.NumField())
	for i := 0; i < t.NumField(); i++ {
		tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if tag != "" && tag != "-" {
			m[tag] = i
		}
	}
	return m
}

var unmarshalerType = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()

// setValue decodes n into v, the field for key.
func (p *parser) setValue(v reflect.Value, n *yaml.Node, key string) {
	line := n.Line
	if n.Kind == yaml.AliasNode || n.Anchor != "" {
		p.fail(key, line, "YAML anchors and aliases are not supported in a config")
		return
	}
	isNull := n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
	switch {
	case reflect.PointerTo(v.Type()).Implements(unmarshalerType):
		if isNull {
			p.fail(key, line, "no value (remove the key to keep the default)")
			return
		}
		if err := n.Decode(v.Addr().Interface()); err != nil {
			p.fail(key, line, "%v", stripLine(err))
		}
	case v.Kind() == reflect.Struct:
		if isNull {
			return // an empty section: nothing set
		}
		if n.Kind != yaml.MappingNode {
			p.fail(key, line, "want a mapping of keys, got %s", cfgerr.Describe(n))
			return
		}
		p.setStruct(v, n, key)
	case isNull:
		p.fail(key, line, "no value (remove the key to keep the default)")
	case v.Kind() == reflect.Slice:
		p.setSlice(v, n, key)
	default:
		if err := setScalar(v, n); err != nil {
			p.fail(key, line, "%v", err)
		}
	}
}

// setScalar decodes the scalar n into v, an int, uint64, float64, bool or
// string (validated when its type has a Validate method).
func setScalar(v reflect.Value, n *yaml.Node) error {
	switch v.Kind() {
	case reflect.Int:
		i, err := cfgerr.Int(n)
		if err != nil {
			return err
		}
		v.SetInt(int64(i))
	case reflect.Uint64:
		var u uint64
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&u) != nil {
			return fmt.Errorf("want an integer from 0 to 2^64-1, got %s", cfgerr.Describe(n))
		}
		v.SetUint(u)
	case reflect.Float64:
		f, err := cfgerr.Float(n)
		if err != nil {
			return err
		}
		v.SetFloat(f)
	case reflect.Bool:
		b, err := cfgerr.Bool(n)
		if err != nil {
			return err
		}
		v.SetBool(b)
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			return fmt.Errorf("want a string, got %s", cfgerr.Describe(n))
		}
		v.SetString(n.Value)
		if val, ok := v.Interface().(interface{ Validate() error }); ok && n.Value != "" {
			return val.Validate()
		}
	default:
		return fmt.Errorf("unsupported config field type %s", v.Type())
	}
	return nil
}

// setSlice decodes the sequence n into the slice v, element by element.
func (p *parser) setSlice(v reflect.Value, n *yaml.Node, key string) {
	if n.Kind != yaml.SequenceNode {
		p.fail(key, n.Line, "want a list, got %s", cfgerr.Describe(n))
		return
	}
	if len(n.Content) == 0 {
		v.Set(reflect.Zero(v.Type())) // [] is the empty list, as an absent one
		return
	}
	out := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, e := range n.Content {
		p.setValue(out.Index(i), e, fmt.Sprintf("%s[%d]", key, i))
	}
	v.Set(out)
}

// setStruct decodes a mapping into the struct v (a section, or the whole
// config when key is ""). Each key is looked up once in a map, so the time is
// linear in the number of keys however many are unknown.
func (p *parser) setStruct(v reflect.Value, n *yaml.Node, key string) {
	fields := fieldsByTag(v.Type())
	seen := make(map[string]bool, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			p.fail(join(key, "?"), k.Line, "a key must be a plain name, got %s", cfgerr.Describe(k))
			continue
		}
		full := join(key, k.Value)
		if seen[k.Value] {
			p.fail(full, k.Line, "repeated key")
			continue
		}
		seen[k.Value] = true
		fi, ok := fields[k.Value]
		if !ok && len(p.errs) >= MaxReported {
			p.dropped++
			continue
		}
		if !ok {
			p.fail(full, k.Line, "unknown key%s", hint(key, fields))
			continue
		}
		p.lines[full] = k.Line
		p.setValue(v.Field(fi), val, full)
	}
}

// hint lists a section's keys for an unknown-key error.
func hint(section string, fields map[string]int) string {
	if len(fields) > 24 {
		return ""
	}
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names)
	where := "this section"
	if section == "" {
		where = "the top level"
	}
	return fmt.Sprintf(" (%s has: %s)", where, strings.Join(names, ", "))
}

func join(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}

// stripLine drops yaml.v3's "line N: " prefix from a type error, since the
// cfgerr.Error carries the line itself.
func stripLine(err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msgs := make([]string, len(te.Errors))
		for i, m := range te.Errors {
			if _, rest, ok := strings.Cut(m, ": "); ok && strings.HasPrefix(m, "line ") {
				m = rest
			}
			msgs[i] = m
		}
		return errors.New(strings.Join(msgs, "; "))
	}
	return err
}

// override applies one key=value to root.
func (p *parser) override(root reflect.Value, kv string) {
	fail := func(err error) { p.add(&OverrideError{Override: kv, Err: err}) }
	key, val, ok := strings.Cut(kv, "=")
	key = strings.TrimSpace(key)
	if !ok || key == "" {
		fail(ErrOverrideSyntax)
		return
	}
	if strings.TrimSpace(val) == "" {
		fail(cfgerr.New(key, "empty value (give a value, or drop the override to keep the file's)"))
		return
	}
	v := root
	path := strings.Split(key, ".")
	for i, k := range path {
		if v.Kind() != reflect.Struct || reflect.PointerTo(v.Type()).Implements(unmarshalerType) {
			fail(cfgerr.New(strings.Join(path[:i], "."), "is not a section"))
			return
		}
		fi, ok := fieldsByTag(v.Type())[k]
		if !ok {
			fail(cfgerr.New(strings.Join(path[:i+1], "."), "unknown key%s", hint(strings.Join(path[:i], "."), fieldsByTag(v.Type()))))
			return
		}
		v = v.Field(fi)
	}
	node, err := parseValue(val)
	if err != nil {
		fail(cfgerr.New(key, "value %q: %v", val, err))
		return
	}
	sub := &parser{lines: map[string]int{}}
	sub.setValue(v, node, key)
	for _, e := range sub.errs {
		cfgerr.Walk(e, func(ce *cfgerr.Error) { ce.Line = 0 })
		fail(e)
	}
	p.lines[key] = 0
	for k := range sub.lines {
		p.lines[k] = 0
	}
}

// parseValue parses an override's value as one YAML document.
func parseValue(val string) (*yaml.Node, error) {
	dec := yaml.NewDecoder(strings.NewReader(val))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		return nil, errors.New("more than one YAML document")
	}
	if len(doc.Content) != 1 {
		return nil, errors.New("no value")
	}
	return doc.Content[0], nil
}

// refuseDefaultZeros reports each present key whose value is the zero value
// that s.Fill would replace: in a file, lr: 0 is a mistake, not a request
// for the default.
func (s Schema[T]) refuseDefaultZeros(p *parser, v T) {
	root := reflect.ValueOf(v)
	keys := make([]string, 0, len(p.lines))
	for key := range p.lines {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	for _, key := range keys {
		f, ok := fieldAt(root, key)
		if !ok || f.Kind() == reflect.Struct || !f.IsZero() {
			continue
		}
		probe := s.Default()
		pv, _ := fieldAt(reflect.ValueOf(&probe).Elem(), key)
		pv.Set(reflect.Zero(pv.Type()))
		filled, _ := fieldAt(reflect.ValueOf(s.Fill(probe)), key)
		if !filled.IsZero() {
			p.fail(key, p.lines[key], "%v is not a valid value; remove the key to use the default (%v)", describeZero(f), filled.Interface())
		}
	}
}

func describeZero(v reflect.Value) string {
	switch v.Kind() {
	case reflect.String:
		return `""`
	case reflect.Slice:
		return "an empty list"
	}
	return fmt.Sprint(v.Interface())
}

// fieldAt returns the field at a dotted key (without [i] indices).
func fieldAt(v reflect.Value, key string) (reflect.Value, bool) {
	for _, k := range strings.Split(key, ".") {
		if v.Kind() != reflect.Struct {
			return reflect.Value{}, false
		}
		fi, ok := fieldsByTag(v.Type())[k]
		if !ok {
			return reflect.Value{}, false
		}
		v = v.Field(fi)
	}
	return v, true
}
