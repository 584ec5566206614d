package train

import (
	"reflect"
	"strings"
	"testing"
)

// FuzzParseConfig feeds the config parser YAML and -set overrides (one per
// line of sets). It must never panic, and a config it accepts must be valid
// and survive a round trip through YAML (what the run's config.yaml holds
// and -resume reads back). The seed corpus is in
// testdata/fuzz/FuzzParseConfig; `go test` runs it, `go test -fuzz
// FuzzParseConfig ./train` explores further.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte("model:\n  depth: 2\n"), "optim.lr=5e-4")
	f.Fuzz(func(t *testing.T, src []byte, sets string) {
		var overrides []string
		if sets != "" {
			overrides = strings.Split(sets, "\n")
		}
		cfg, err := ParseConfig(src, overrides)
		if err != nil {
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("accepted an invalid config: %v", err)
		}
		b, err := cfg.YAML()
		if err != nil {
			t.Fatalf("YAML: %v", err)
		}
		back, err := ParseConfig(b, nil)
		if err != nil {
			t.Fatalf("the resolved config does not parse back: %v\n%s", err, b)
		}
		if !reflect.DeepEqual(back, cfg) {
			t.Fatalf("round trip changed the config:\n%+v\n%+v", cfg, back)
		}
	})
}
