package train

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseConfigStrict(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		sets       []string
		want       string // substring of the error; "" = no error
	}{
		{"defaults", "", nil, ""},
		{"unknown key with line", "model:\n  embed_dim: 64\n  num_head: 4\n", nil, "line 3: field num_head not found"},
		{"unknown section", "modle:\n  depth: 2\n", nil, "field modle not found"},
		{"bad type", "model:\n  depth: two\n", nil, "line 2"},
		{"invalid value names key", "optim:\n  lr: -1\n", nil, "optim.lr"},
		{"model value", "model:\n  embed_dim: 10\n  num_heads: 3\n", nil, "model.num_heads"},
		{"train value", "train:\n  batch_size: 0\n", nil, "train.batch_size"},
		{"data name", "data:\n  name: imagenet21k\n", nil, "data.name"},
		{"set ok", "", []string{"optim.lr=5e-4", "model.img_size=[32, 48]", "model.patch_size=16"}, ""},
		{"set unknown", "", []string{"optim.learning_rate=1"}, `unknown key "optim.learning_rate"`},
		{"set malformed", "", []string{"optim.lr"}, "want key=value"},
		{"set typed", "", []string{"train.epochs=many"}, "cannot unmarshal"},
		{"set invalid", "", []string{"mixup.prob=1.5"}, "mixup.prob"},
		{"not a mapping", "- 1\n- 2\n", nil, "mapping"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ParseConfig([]byte(tc.yaml), tc.sets)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q (cfg %+v)", err, tc.want, cfg.Model)
			}
		})
	}
}

func TestSetOverrides(t *testing.T) {
	cfg, err := ParseConfig([]byte("optim:\n  lr: 1e-3\nmodel:\n  img_size: 224\n"), []string{"optim.lr=5e-4", "model.img_size=[32, 48]", "model.patch_size=16", "train.out_dir=/tmp/x"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Optim.LR != 5e-4 || cfg.Model.ImgSize != [2]int{32, 48} || cfg.Model.PatchSize != 16 || cfg.Train.OutDir != "/tmp/x" {
		t.Fatalf("overrides not applied: lr %v img %v patch %d out %s", cfg.Optim.LR, cfg.Model.ImgSize, cfg.Model.PatchSize, cfg.Train.OutDir)
	}
	if cfg.Optim.WeightDecay != 0.05 {
		t.Fatalf("absent key lost its default: weight_decay %v", cfg.Optim.WeightDecay)
	}
}

func TestShippedConfigsLoad(t *testing.T) {
	files, err := filepath.Glob("../configs/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no configs found: %v", err)
	}
	for _, f := range files {
		if _, err := LoadConfig(f, nil); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if _, err := LoadConfig(filepath.Join(t.TempDir(), "missing.yaml"), nil); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("missing file: error %v should name it", err)
	}
}

func TestConfigRoundTrip(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Model.ImgSize = [2]int{32, 48}
	cfg.Model.PatchSize = 16
	b, err := cfg.YAML()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := LoadConfig(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := back.YAML()
	if string(b) != string(b2) {
		t.Fatalf("resolved config does not round-trip:\n%s\nvs\n%s", b, b2)
	}
}
