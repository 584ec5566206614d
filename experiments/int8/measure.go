package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/checkpoint"
	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/evaluate"
	"github.com/vitgo/vit/experiments/internal/harness"
	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/internal/optional"
	"github.com/vitgo/vit/layers"
)

// kase is one model file and the inputs both sides read.
type kase struct {
	Name, Model string
	X           []float32 // (N, C, H, W), normalised as our evaluation reads them
	Shape       [4]int
	Labels      []int // nil: random images
	Batch       int
}

// ortVariants are ONNX Runtime's models of a case: the file stem's suffix
// and quantize_dynamic.py's flags ("" = the float32 export).
var ortVariants = []struct{ Suffix, Label, Flags string }{
	{"", "fp32", ""},
	{".int8", "int8", ""},
	{".int8att", "int8 + attention's Q·Kᵀ, P·V", "--attention"},
	{".int8rr", "int8, 7-bit weights", "--reduce-range"},
}

func measure(e *harness.Env) (results, error) {
	r := results{Machine: harness.DescribeMachine().String()}
	if err := os.MkdirAll(flags.work, 0o755); err != nil {
		return r, err
	}
	var cases []kase
	for _, list := range flags.checkpoints {
		for _, p := range strings.Split(list, ",") {
			c, err := checkpointCase(p)
			if err != nil {
				return r, err
			}
			cases = append(cases, c)
		}
	}
	if flags.vitS {
		c, err := vitSCase(flags.work, flags.images)
		if err != nil {
			return r, err
		}
		cases = append(cases, c)
	}
	if len(cases) == 0 {
		return r, fmt.Errorf("nothing to measure: give -checkpoints or -vit-s")
	}
	for _, c := range cases {
		e.Log.Infof("%s: %d images", c.Name, c.Shape[0])
		rows, err := runCase(&r, c)
		if err != nil {
			return r, fmt.Errorf("%s: %w", c.Name, err)
		}
		r.Rows = append(r.Rows, rows...)
	}
	return r, nil
}

// checkpointCase is a model file of ours on its data set's validation split.
func checkpointCase(path string) (kase, error) {
	m, meta, _, err := checkpoint.LoadModel(path, tensor.Float32, nil, "")
	if err != nil {
		return kase{}, err
	}
	l := evaluate.Loader{Data: data.DefaultConfig(), Augment: data.DefaultAugmentConfig(), BatchSize: 100}
	l.Data.Name = data.DatasetName(meta.Dataset)
	loader, err := l.Open(m.Config, meta.Mean, meta.Std)
	if err != nil {
		return kase{}, err
	}
	c := kase{Name: fmt.Sprintf("%s (%s validation)", filepath.ToSlash(path), meta.Dataset), Model: path, Batch: 100}
	it := loader.Epoch(0, 0)
	defer it.Close()
	for {
		b, ok, err := it.Next()
		if err != nil {
			return kase{}, err
		}
		if !ok {
			break
		}
		c.X = append(c.X, b.X...)
		c.Labels = append(c.Labels, b.Labels...)
		b.Release()
	}
	c.Shape = [4]int{len(c.Labels), m.Config.InChans, m.Config.ImgSize[0], m.Config.ImgSize[1]}
	return c, nil
}

// vitSCase saves a ViT-S/16 at 224 with random weights (seed 0, a random
// head: a zero head's logits are all its bias) as a model file of ours,
// and n random normal images for it.
func vitSCase(work string, n int) (kase, error) {
	cfg := layers.Presets["vit_small_patch16_224"]
	cfg.ZeroInitHead = optional.BoolOf(false)
	m, err := layers.New(cfg, tensor.Float32, 0)
	if err != nil {
		return kase{}, err
	}
	path := filepath.Join(work, "vit_s16_random.safetensors")
	meta := checkpoint.ModelMeta{Mean: []float64{0, 0, 0}, Std: []float64{1, 1, 1}, Classes: checkpoint.HeadClasses(nil, cfg.NumClasses)}
	if err := checkpoint.SaveModel(path, m, meta, nil); err != nil {
		return kase{}, err
	}
	c := kase{Name: fmt.Sprintf("ViT-S/16 at 224, random weights (seed 0), %d random normal images", n), Model: path, Batch: 8,
		Shape: [4]int{n, 3, 224, 224}}
	rng := rand.New(rand.NewPCG(0, 224))
	c.X = make([]float32, n*3*224*224)
	for i := range c.X {
		c.X[i] = float32(rng.NormFloat64())
	}
	return c, nil
}

// ours is the logits of the Frozen graph a classify lane runs, at prec,
// from a fresh load of the model file.
func ours(c kase, prec graph.Precision) ([]float32, error) {
	m, _, _, err := checkpoint.LoadModel(c.Model, tensor.Float32, nil, "")
	if err != nil {
		return nil, err
	}
	ev, err := evaluate.NewFrozenIn(m, c.Batch, graph.NewArena(), evaluate.WithPrecision(prec))
	if err != nil {
		return nil, err
	}
	defer ev.Close()
	per := c.Shape[1] * c.Shape[2] * c.Shape[3]
	var out []float32
	for i := 0; i < c.Shape[0]; i += c.Batch {
		b := min(c.Batch, c.Shape[0]-i)
		lg, err := ev.Logits(c.X[i*per:(i+b)*per], b)
		if err != nil {
			return nil, err
		}
		out = append(out, lg...)
	}
	return out, nil
}

// runCase measures both sides on c and returns its rows.
func runCase(r *results, c kase) ([]row, error) {
	mine := map[graph.Precision][]float32{}
	for _, p := range []graph.Precision{graph.FP32, graph.INT8} {
		lg, err := ours(c, p)
		if err != nil {
			return nil, fmt.Errorf("ours %s: %w", p, err)
		}
		mine[p] = lg
	}
	peer, err := onnxRuntime(r, c)
	if err != nil {
		return nil, err
	}
	k := len(mine[graph.FP32]) / c.Shape[0]
	add := func(rows []row, side, variant, against string, got, ref []float32) ([]row, error) {
		x, err := compare(got, ref, k, c.Labels)
		if err != nil {
			return nil, err
		}
		x.Case, x.Side, x.Variant, x.Against = c.Name, side, variant, against
		return append(rows, x), nil
	}
	rows, err := add(nil, "ours", "fp32", "ONNX Runtime fp32", mine[graph.FP32], peer["fp32"])
	if err == nil {
		rows, err = add(rows, "ours", "int8", "ours fp32", mine[graph.INT8], mine[graph.FP32])
	}
	for _, v := range ortVariants[1:] {
		if err == nil {
			rows, err = add(rows, "ONNX Runtime", v.Label, "ONNX Runtime fp32", peer[v.Label], peer["fp32"])
		}
	}
	return rows, err
}

// onnxRuntime exports c's model file through timm, quantizes it and runs
// every variant on c's inputs: logits by variant label.
func onnxRuntime(r *results, c kase) (map[string][]float32, error) {
	dir := filepath.Join(flags.work, "ort")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	stem := filepath.Base(filepath.Dir(c.Model)) + "_" + strings.TrimSuffix(filepath.Base(c.Model), ".safetensors")
	scripts := filepath.Join("experiments", "bench", "ort")
	if _, err := command(flags.python, []string{"PYTHONPATH=" + flags.timm}, filepath.Join(scripts, "export_checkpoint.py"), c.Model, dir, "--name", stem); err != nil {
		return nil, err
	}
	base := filepath.Join(dir, stem)
	models := []string{base + ".onnx"}
	for _, v := range ortVariants[1:] {
		args := []string{filepath.Join(scripts, "quantize_dynamic.py"), base + ".onnx", base + v.Suffix + ".onnx"}
		if v.Flags != "" {
			args = append(args, v.Flags)
		}
		out, err := command(flags.python, nil, args...)
		if err != nil {
			return nil, err
		}
		var q struct{ ONNX string }
		if err := json.Unmarshal(out, &q); err != nil {
			return nil, fmt.Errorf("quantize_dynamic.py: %w: %q", err, out)
		}
		r.ONNX = "python3-onnx " + q.ONNX
		models = append(models, base+v.Suffix+".onnx")
	}
	in := base + ".inputs.f32"
	if err := writeF32(in, c.X); err != nil {
		return nil, err
	}
	shape := fmt.Sprintf("%d,%d,%d,%d", c.Shape[0], c.Shape[1], c.Shape[2], c.Shape[3])
	args := append([]string{filepath.Join(scripts, "ort_eval.js"), "--inputs", in, "--shape", shape, "--out", dir, "--batch", strconv.Itoa(c.Batch)}, models...)
	out, err := command(flags.node, []string{"NODE_PATH=" + filepath.Join(flags.ortDir, "node_modules")}, args...)
	if err != nil {
		return nil, err
	}
	logits := map[string][]float32{}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(models) {
		return nil, fmt.Errorf("ort_eval.js: %d result lines for %d models: %q", len(lines), len(models), out)
	}
	for i, line := range lines {
		var o struct{ Peer, Logits string }
		if err := json.Unmarshal([]byte(line), &o); err != nil {
			return nil, fmt.Errorf("ort_eval.js: %w: %q", err, line)
		}
		r.ORT = o.Peer
		b, err := os.Stat(o.Logits)
		if err != nil {
			return nil, err
		}
		lg, err := readF32(o.Logits, int(b.Size()/4))
		if err != nil {
			return nil, err
		}
		logits[ortVariants[i].Label] = lg
	}
	return logits, nil
}

// command runs name args with env added and returns its stdout; a failure
// names the command and ends with its stderr's last lines.
func command(name string, env []string, args ...string) ([]byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tail := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		tail = tail[max(0, len(tail)-5):]
		return nil, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.Join(tail, " | "))
	}
	return out, nil
}
