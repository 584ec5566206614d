package train

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestShippedConfigsResolveUnchanged pins what every configs/*.yaml resolves
// to: the config.yaml a run writes (Config.YAML) must equal
// testdata/resolved/<name>.yaml, recorded before the zero-means-default
// change to the config types. A change to a default, to how a key is read or
// to how a value is written shows here. To record a deliberate change, run
// with VIT_UPDATE_RESOLVED=1 and review the diff.
func TestShippedConfigsResolveUnchanged(t *testing.T) {
	files, err := filepath.Glob("../configs/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no configs found: %v", err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(strings.TrimSuffix(name, ".yaml"), func(t *testing.T) {
			cfg, err := LoadConfig(f, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := cfg.YAML()
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "resolved", name)
			if os.Getenv("VIT_UPDATE_RESOLVED") != "" {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("%s resolves to\n%s\nwant (%s)\n%s", f, got, golden, want)
			}
		})
	}
}

// zeroSettings are the keys whose 0 or false is a setting different from
// their default: in Go their zero value means the default, and an explicit
// 0/false in YAML or -set must still be 0/false.
var zeroSettings = map[string]struct{ zero, def string }{
	"optim.clip_grad":      {"0", "1"},
	"optim.weight_decay":   {"0", "0.05"},
	"optim.warmup_epochs":  {"0", "1"},
	"optim.warmup_lr":      {"0", "1e-06"},
	"optim.min_lr":         {"0", "1e-05"},
	"optim.layer_decay":    {"0", "0"},
	"model.zero_init_head": {"false", "true"},
	"model.qkv_bias":       {"false", "true"},
	"mixup.correct_lam":    {"false", "true"},
	"mixup.prob":           {"0", "1"},
	"mixup.switch_prob":    {"0", "0.5"},
	"checkpoint.save_best": {"false", "true"},
	"distill.alpha":        {"0", "0.5"},
}

// TestExplicitZerosStayZero: each of zeroSettings written as 0/false, in the
// file or with -set, resolves to 0/false, not to its default; left out, it
// resolves to its default.
func TestExplicitZerosStayZero(t *testing.T) {
	var file strings.Builder
	sections := map[string][]string{}
	var sets []string
	for key, v := range zeroSettings {
		sec, k, _ := strings.Cut(key, ".")
		sections[sec] = append(sections[sec], "  "+k+": "+v.zero+"\n")
		sets = append(sets, key+"="+v.zero)
	}
	for sec, lines := range sections {
		file.WriteString(sec + ":\n" + strings.Join(lines, ""))
	}
	for _, tc := range []struct {
		name string
		src  string
		sets []string
		def  bool
	}{
		{"yaml", file.String(), nil, false},
		{"set", "", sets, false},
		{"absent", "", nil, true},
	} {
		cfg, err := ParseConfig([]byte(tc.src), tc.sets)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		flat, err := flatConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for key, v := range zeroSettings {
			want := v.zero
			if tc.def {
				want = v.def
			}
			if flat[key] != want {
				t.Errorf("%s: %s resolves to %s, want %s", tc.name, key, flat[key], want)
			}
		}
		// The explicit zeros survive the run's config.yaml and -resume's reading of it.
		b, err := cfg.YAML()
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseConfig(b, nil)
		if err != nil {
			t.Fatalf("%s: config.yaml does not parse back: %v", tc.name, err)
		}
		if changes, err := diffConfigs(cfg, back); err != nil || len(changes) > 0 {
			t.Errorf("%s: config.yaml round trip changed %v (%v)", tc.name, changes, err)
		}
	}
}
