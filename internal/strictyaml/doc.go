// Package strictyaml decodes one YAML document into a Go struct schema
// strictly: every key must exist in the schema (found by its `yaml` tag),
// integers are integers (16.7 is refused, 1e6 is 1000000), an empty value
// is refused, anchors and aliases are refused, a second document is
// refused, and a type error names the dotted key and its line. Overrides
// (key=value, a dotted key and a YAML value) are applied after the file,
// and an explicit value that the schema's defaults would replace (lr: 0
// where 0 means "the default") is refused rather than silently replaced.
//
// Every error about one value is a *cfgerr.Error naming its key (and its
// line, for keys from the file); an override's errors are wrapped in an
// *OverrideError. Unknown keys are found in time linear in the file, and
// after MaxReported errors the rest are only counted.
//
// The schema is any struct of plain fields (int, uint64, float64, bool,
// string, slices of them, nested structs) and fields whose pointer
// implements yaml.Unmarshaler; a string field whose type has a Validate()
// error method is validated as it is decoded.
package strictyaml
