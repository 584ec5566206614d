package train

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vitgo/vit/checkpoint"
	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/internal/enum"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/report"
)

// TestPrecisionConfig: train.precision defaults to fp32, takes bf16 from
// the file or -set, and refuses an unknown value (an *enum.Error under a
// *ConfigError naming the key) and bf16 with the conv patch embedding.
func TestPrecisionConfig(t *testing.T) {
	cfg, err := ParseConfig([]byte("train: {epochs: 1}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Train.Precision != graph.FP32 {
		t.Errorf("default precision %q, want fp32", cfg.Train.Precision)
	}
	if cfg, err = ParseConfig([]byte("train: {precision: bf16}\n"), nil); err != nil || cfg.Train.Precision != graph.BF16 {
		t.Errorf("precision: bf16 in the file: %q, %v", cfg.Train.Precision, err)
	}
	if cfg, err = ParseConfig(nil, []string{"train.precision=bf16"}); err != nil || cfg.Train.Precision != graph.BF16 {
		t.Errorf("-set train.precision=bf16: %q, %v", cfg.Train.Precision, err)
	}
	for _, c := range []struct {
		src       string
		overrides []string
	}{
		{"train: {precision: fp16}\n", nil},
		{"", []string{"train.precision=float32"}},
		{"model: {patch_embed: conv}\n", []string{"train.precision=bf16"}},
	} {
		_, err := ParseConfig([]byte(c.src), c.overrides)
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Key != "train.precision" {
			t.Errorf("%q %v: err %v, want a *ConfigError for train.precision", c.src, c.overrides, err)
		}
	}
	err = Config{Train: RunConfig{Precision: "fp16"}}.Validate()
	var ce *ConfigError
	var ee *enum.Error
	if !errors.As(err, &ce) || ce.Key != "train.precision" || !errors.As(err, &ee) {
		t.Errorf("Validate of precision fp16: %v, want an *enum.Error under a *ConfigError for train.precision", err)
	}
}

// TestRecomputeConfig: train.recompute defaults to none, takes mlp and
// block with bf16, and refuses an unknown value, and either with fp32 or
// with dropout (a *ConfigError naming train.recompute).
func TestRecomputeConfig(t *testing.T) {
	cfg, err := ParseConfig([]byte("train: {epochs: 1}\n"), nil)
	if err != nil || cfg.Train.Recompute != layers.RecomputeNone {
		t.Errorf("default recompute %q, %v; want none", cfg.Train.Recompute, err)
	}
	for _, rc := range []layers.Recompute{layers.RecomputeMLP, layers.RecomputeBlock} {
		if cfg, err = ParseConfig(nil, []string{"train.precision=bf16", "train.recompute=" + string(rc)}); err != nil || cfg.Train.Recompute != rc {
			t.Errorf("-set train.recompute=%s: %q, %v", rc, cfg.Train.Recompute, err)
		}
	}
	for _, set := range [][]string{
		{"train.precision=bf16", "train.recompute=everything"},
		{"train.recompute=mlp"},
		{"train.recompute=block"},
		{"train.precision=bf16", "train.recompute=mlp", "model.dropout=0.1"},
		{"train.precision=bf16", "train.recompute=block", "model.dropout=0.1"},
	} {
		_, err := ParseConfig(nil, set)
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Key != "train.recompute" {
			t.Errorf("%v: err %v, want a *ConfigError for train.recompute", set, err)
		}
	}
}

// TestBF16Run: a few bf16 training steps run with a finite loss; the run
// records its precision in config.yaml, the state file's config and the
// model files' metadata; and -resume refuses a change of precision, writing
// nothing.
func TestBF16Run(t *testing.T) {
	cfg := quickRun(t)
	cfg.Train.Precision = graph.BF16
	cfg.Train.Epochs, cfg.Train.MaxSteps = 2, 3
	out := cfg.Train.OutDir
	res, err := Run(context.Background(), cfg, Options{Log: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Steps != 3 || math.IsNaN(res.Last.Loss) || math.IsInf(res.Last.Loss, 0) {
		t.Fatalf("bf16 run: %d steps, validation loss %v", res.Steps, res.Last.Loss)
	}
	header, rows, err := report.ReadMetrics(filepath.Join(out, MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	col := -1
	for i, h := range header {
		if h == "train_loss" {
			col = i
		}
	}
	if col < 0 || len(rows) == 0 {
		t.Fatalf("metrics: header %v, %d rows", header, len(rows))
	}
	if l, err := strconv.ParseFloat(rows[len(rows)-1][col], 64); err != nil || math.IsNaN(l) || math.IsInf(l, 0) || l <= 0 {
		t.Fatalf("bf16 train_loss %q (%v)", rows[len(rows)-1][col], err)
	}
	_, meta, _, err := checkpoint.ReadModel(filepath.Join(out, LastModel))
	if err != nil {
		t.Fatal(err)
	}
	if meta.Precision != graph.BF16 {
		t.Errorf("%s metadata precision %q, want bf16", LastModel, meta.Precision)
	}
	st, err := LoadState(filepath.Join(out, LastState))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(st.Config, "precision: bf16") {
		t.Errorf("the state file's config does not record the precision:\n%s", st.Config)
	}

	// The same run in fp32 ends with other weights: the training graph's
	// products were bfloat16 ones.
	ref := cfg
	ref.Train.Precision, ref.Train.OutDir = graph.FP32, t.TempDir()
	if _, err := Run(context.Background(), ref, Options{Log: quietLog()}); err != nil {
		t.Fatal(err)
	}
	st32, err := LoadState(filepath.Join(ref.Train.OutDir, LastState))
	if err != nil {
		t.Fatal(err)
	}
	differ := 0
	for name, w := range st.Weights {
		for i := range w {
			if w[i] != st32.Weights[name][i] {
				differ++
				break
			}
		}
	}
	if differ == 0 {
		t.Error("the bf16 run's weights equal the fp32 run's")
	}

	before := snapshot(t, out)
	fp32 := cfg
	fp32.Train.Precision = graph.FP32
	_, err = Run(context.Background(), fp32, Options{Log: quietLog(), Resume: true})
	var rce *ResumeConfigError
	if !errors.As(err, &rce) || len(rce.Changes) != 1 || rce.Changes[0].Key != "train.precision" ||
		rce.Changes[0].Old != "bf16" || rce.Changes[0].New != "fp32" {
		t.Fatalf("resume changing the precision: %v, want a *ResumeConfigError for train.precision bf16 → fp32", err)
	}
	sameSnapshot(t, "a refused resume", before, snapshot(t, out))
}

// TestModelMetaPrecision: the precision survives a model file's metadata,
// and an unknown one there is a *checkpoint.MetadataError.
func TestModelMetaPrecision(t *testing.T) {
	m := tinyModel(t, nil)
	path := filepath.Join(t.TempDir(), "m.safetensors")
	if err := checkpoint.SaveModel(path, m, checkpoint.ModelMeta{Precision: graph.BF16}, nil); err != nil {
		t.Fatal(err)
	}
	_, meta, _, err := checkpoint.ReadModel(path)
	if err != nil || meta.Precision != graph.BF16 {
		t.Fatalf("read back precision %q, %v", meta.Precision, err)
	}
	if err := checkpoint.SaveModel(path, m, checkpoint.ModelMeta{Precision: "fp8"}, nil); err != nil {
		t.Fatal(err)
	}
	_, _, _, err = checkpoint.ReadModel(path)
	var me *checkpoint.MetadataError
	if !errors.As(err, &me) || me.Key != "precision" {
		t.Fatalf("unknown precision in the metadata: %v, want a *MetadataError for precision", err)
	}
}
