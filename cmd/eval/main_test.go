package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/vitgo/vit/checkpoint"
	"github.com/vitgo/vit/checkpoint/safetensors"
	"github.com/vitgo/vit/train"
)

func TestEvalCheckpointAtTwoSizes(t *testing.T) {
	dir := t.TempDir()
	cfg, err := train.ParseConfig([]byte(`
model: {img_size: 28, patch_size: 7, in_chans: 1, embed_dim: 16, depth: 1, num_heads: 2, mlp_ratio: 2, num_classes: 10}
data: {limit_train: 128, limit_val: 50}
train: {epochs: 1, batch_size: 32, eval_batch_size: 16}
`), []string{"train.out_dir=" + dir})
	if err != nil {
		t.Fatal(err)
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	if _, err := train.Run(context.Background(), cfg, train.Options{Log: log}); err != nil {
		t.Fatal(err)
	}
	ckpt := filepath.Join(dir, train.LastModel)
	for _, size := range []string{"", "56", "56x42"} {
		args := []string{"-checkpoint", ckpt, "-set", "data.limit_val=50", "-results", filepath.Join(dir, "r.json"), "-predictions", filepath.Join(dir, "p.csv"), "-confusion-png", filepath.Join(dir, "c.png")}
		if size != "" {
			args = append(args, "-img-size", size, "-interp", "bilinear")
		}
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 0 {
			t.Fatalf("size %q: exit %d: %s", size, code, errb.String())
		}
		if size != "" && !strings.Contains(out.String(), "pos_embed resampled 4x4 →") {
			t.Errorf("size %s: no resampling note in %q", size, out.String())
		}
		b, err := os.ReadFile(filepath.Join(dir, "r.json"))
		if err != nil {
			t.Fatal(err)
		}
		var r map[string]any
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"top1", "top5", "loss", "images", "img_per_s", "per_class", "confusion"} {
			if _, ok := r[k]; !ok {
				t.Errorf("results lack %q", k)
			}
		}
		if r["images"].(float64) != 50 {
			t.Errorf("images %v, want 50", r["images"])
		}
	}
	// -precision bf16 and int8 evaluate with other products than fp32: the
	// mean loss differs.
	var out, errb bytes.Buffer
	loss := map[string]float64{}
	for _, p := range []string{"fp32", "bf16", "int8"} {
		res := filepath.Join(dir, p+".json")
		if code := run([]string{"-checkpoint", ckpt, "-set", "data.limit_val=20", "-precision", p, "-results", res}, &out, &errb); code != 0 {
			t.Fatalf("-precision %s: exit %d: %s", p, code, errb.String())
		}
		var r struct{ Loss float64 }
		if b, err := os.ReadFile(res); err != nil || json.Unmarshal(b, &r) != nil {
			t.Fatalf("-precision %s: results %s: %v", p, res, err)
		}
		loss[p] = r.Loss
	}
	for _, p := range []string{"bf16", "int8"} {
		if loss["fp32"] == loss[p] {
			t.Errorf("-precision %s gives fp32's loss %v", p, loss["fp32"])
		}
	}
	// The run kept no EMA: -ema is refused naming the flag and the state file.
	out.Reset()
	errb.Reset()
	if code := run([]string{"-checkpoint", ckpt, "-ema"}, &out, &errb); code == 0 || !strings.Contains(errb.String(), "eval: -ema: ") ||
		!strings.Contains(errb.String(), train.LastState) || !strings.Contains(errb.String(), "holds no EMA weights") {
		t.Errorf("-ema without EMA weights: exit %d, stderr %q", code, errb.String())
	}
	// An empty -set names the flag.
	errb.Reset()
	if code := run([]string{"-checkpoint", ckpt, "-set", "data.limit_val="}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "-set data.limit_val=") {
		t.Errorf("empty -set: exit %d, stderr %q", code, errb.String())
	}
}

func TestEvalErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "-checkpoint is required"},
		{[]string{"-checkpoint", "missing.safetensors"}, "missing.safetensors"},
		{[]string{"-checkpoint", "x", "-img-size", "abc"}, "-img-size"},
		{[]string{"-checkpoint", "x", "-precision", "fp16"}, "-precision"},
		{[]string{"-checkpoint", "x", "-precision", ""}, "-precision"},
	} {
		var out, errb bytes.Buffer
		if code := run(tc.args, &out, &errb); code == 0 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, errb.String(), tc.want)
		}
	}
}

// TestEvalRefusesImpossibleSizes: impossible sizes end cmd/eval with a
// non-zero exit and a message naming the key or flag, before any
// allocation: -img-size 100000, and 800 KB checkpoints whose metadata
// claims embed_dim 2³⁰ or ln_eps +Inf.
func TestEvalRefusesImpossibleSizes(t *testing.T) {
	dir := t.TempDir()
	ckpt := func(name string, md map[string]string) string {
		p := filepath.Join(dir, name)
		pad := safetensors.FromFloat32("pad", []int{200_000}, make([]float32, 200_000))
		md["format"] = checkpoint.FormatVersion
		if err := safetensors.Write(p, []safetensors.Tensor{pad}, md); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"-checkpoint", "x.safetensors", "-img-size", "100000"}, []string{"-img-size", "model.img_size"}},
		{[]string{"-checkpoint", "x.safetensors", "-img-size", "224x100000"}, []string{"-img-size"}},
		{[]string{"-checkpoint", ckpt("dim.safetensors", map[string]string{"embed_dim": "1073741824"})}, []string{"model.embed_dim", "dim.safetensors"}},
		{[]string{"-checkpoint", ckpt("eps.safetensors", map[string]string{"ln_eps": ".inf"})}, []string{"model.ln_eps", "eps.safetensors"}},
		{[]string{"-checkpoint", ckpt("depth.safetensors", map[string]string{"depth": "1e6"}), "-set", "data.limit_val=1"}, []string{"model.depth"}},
	} {
		var out, errb bytes.Buffer
		code := run(tc.args, &out, &errb)
		if code == 0 {
			t.Errorf("%v: exit 0", tc.args)
		}
		for _, w := range tc.want {
			if !strings.Contains(errb.String(), w) {
				t.Errorf("%v: stderr %q does not name %q", tc.args, errb.String(), w)
			}
		}
	}
}
