package train

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/checkpoint"
	"github.com/vitgo/vit/checkpoint/safetensors"
	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/evaluate"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/report"
)

// poisonedCheckpoint writes a fresh tiny model whose head.bias[0] is v, by
// editing the file (so no writer's own finite check can get in the way).
func poisonedCheckpoint(t *testing.T, cfg Config, v float32) string {
	t.Helper()
	m, err := layers.New(cfg.Model, tensor.Float32, 1)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.safetensors")
	if err := checkpoint.SaveModel(path, m, checkpoint.ModelMeta{Dataset: string(data.NameMNIST), Weights: "raw"}, nil); err != nil {
		t.Fatal(err)
	}
	f, err := safetensors.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, ts := range f.Tensors {
		if ts.Name == "head.bias" {
			b, err := ts.Float32()
			if err != nil {
				t.Fatal(err)
			}
			b[0] = v
			f.Tensors[i] = safetensors.FromFloat32(ts.Name, ts.Shape, b)
		}
	}
	if err := safetensors.Write(path, f.Tensors, f.Metadata); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestEvalCountsNonFiniteAsWrong: an image whose logits hold a NaN or an
// infinity is a wrong prediction. Otherwise, with a NaN head bias every
// image would score top-1 100 % (NaN compares false), and with +Inf in class
// 0's bias the images of class 0 would score right.
func TestEvalCountsNonFiniteAsWrong(t *testing.T) {
	cfg := tinyRun(t)
	for _, v := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
		ckpt := poisonedCheckpoint(t, cfg, v)
		dir := filepath.Dir(ckpt)
		o := evaluate.Options{Checkpoint: ckpt, Loader: evalLoader(cfg)}
		files := report.EvalFiles{Results: filepath.Join(dir, "r.json"), Predictions: filepath.Join(dir, "p.csv")}
		r, _, _, err := evalToFiles(context.Background(), o, files)
		if err != nil {
			t.Fatalf("%v: %v", v, err)
		}
		if r.Top1 != 0 || r.Top5 != 0 || r.NonFinite != 100 || r.Images != 100 {
			t.Fatalf("head.bias[0]=%v: top1 %v top5 %v non-finite %d of %d, want 0, 0, 100 of 100", v, r.Top1, r.Top5, r.NonFinite, r.Images)
		}
		for y, a := range r.PerClass {
			if a != 0 {
				t.Errorf("%v: class %d accuracy %v, want 0", v, y, a)
			}
		}
		var rep bytes.Buffer
		report.FormatEval(&rep, r, nil)
		if !strings.Contains(rep.String(), "100 of 100 images had non-finite logits") {
			t.Errorf("%v: report lacks the warning:\n%s", v, rep.String())
		}
		// -results: the count is a field, and the undefined loss is null
		// (JSON has no NaN).
		b, err := os.ReadFile(files.Results)
		if err != nil {
			t.Fatal(err)
		}
		var js map[string]any
		if err := json.Unmarshal(b, &js); err != nil {
			t.Fatal(err)
		}
		if js["non_finite"] != 100.0 || js["top1"] != 0.0 || js["loss"] != nil {
			t.Errorf("%v: results non_finite %v top1 %v loss %v", v, js["non_finite"], js["top1"], js["loss"])
		}
		pred, err := os.ReadFile(files.Predictions)
		if err != nil {
			t.Fatal(err)
		}
		if lines := strings.Split(string(pred), "\n"); !strings.HasPrefix(lines[1], "0,") || strings.Split(lines[1], ",")[2] != "-1" {
			t.Errorf("%v: prediction row %q, want pred -1", v, lines[1])
		}
	}
	// A finite model is unaffected: no warning, a finite loss.
	r, _, _, err := evaluate.Checkpoint(context.Background(), evaluate.Options{Checkpoint: poisonedCheckpoint(t, cfg, 0.5), Loader: evalLoader(cfg)})
	if err != nil {
		t.Fatal(err)
	}
	if r.NonFinite != 0 || r.Warning() != "" || math.IsNaN(r.Loss) || r.Top1 == 0 {
		t.Fatalf("finite model: %+v", r)
	}
}

// TestMetricsRecordNonFinite: training validation's count reaches metrics.csv.
func TestMetricsRecordNonFinite(t *testing.T) {
	l := &report.MetricsLog{Path: filepath.Join(t.TempDir(), MetricsFile)}
	if err := l.Create(); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(report.MetricsRow{Epoch: 1, Step: 8, Val: &evaluate.Result{Loss: math.NaN(), NonFinite: 3, Images: 10}}); err != nil {
		t.Fatal(err)
	}
	header, rows, err := report.ReadMetrics(l.Path)
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range header {
		if h == "val_non_finite" {
			if rows[0][i] != "3" {
				t.Fatalf("val_non_finite %q, want 3", rows[0][i])
			}
			return
		}
	}
	t.Fatalf("no val_non_finite column in %v", header)
}
