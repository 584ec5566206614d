package main

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/evaluate"
	"github.com/vitgo/vit/experiments/internal/harness"
	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/graph/kernels"
	"github.com/vitgo/vit/layers"
)

// The serving mode (-serving) times, in alternating rounds of child
// processes, our serving graph (the Frozen evaluator a classify lane runs)
// and ONNX Runtime (../shared/bench/ort/ort_bench.js on timm's own ViT
// exported by export_onnx.py) at 224 pixels: the latency of one image and
// the throughput at batch 8 and 32. It writes serving/results.json and
// serving/README.md (from serving.md.tmpl).

//go:embed serving.md.tmpl
var servingReadme string

// modeServing is the child mode that times our serving graph: → oursServing.
const modeServing = "serving"

// servingBatches are the batches timed: latency at 1, throughput at 8 and 32.
var servingBatches = []int{1, 8, 32}

// ortPackage is the ONNX Runtime release ort_bench.js is written for.
const ortPackage = "onnxruntime-node@1.30.0"

// servingModel is a model of the serving table: its -models name, its
// layers preset (also timm's model name, which export_onnx.py takes) and its
// label.
type servingModel struct{ Name, Preset, Label string }

var servingModels = []servingModel{
	{"ti", "vit_tiny_patch16_224", "ViT-Ti/16"},
	{"s", "vit_small_patch16_224", "ViT-S/16"},
	{"b", "vit_base_patch16_224", "ViT-B/16"},
}

// servingOpts are the serving mode's flags.
type servingOpts struct {
	models                             string
	precision                          string
	threads, iters, batchIters, warmup int
	rounds                             int
	seed                               uint64
	ort                                bool
	ortDir, ortScript, timm            string
	node, python                       string
	pytorch                            bool
	torchScript                        string
}

var so servingOpts

// servingExperiment is the serving mode as a harness experiment: its
// results.json and README.md go to experiments/bench/serving.
var servingExperiment = harness.Experiment[servingResults]{
	Name:   "bench",
	Readme: servingReadme,
	Flags: func(fs *flag.FlagSet) {
		fs.Bool("serving", true, "time serving graphs against ONNX Runtime (this mode)")
		fs.StringVar(&so.models, "models", "ti,s,b", "comma-separated models at 224: ti (ViT-Ti/16), s (ViT-S/16), b (ViT-B/16)")
		fs.StringVar(&so.precision, "precision", "fp32,int8,bf16", "comma-separated precisions: fp32, int8, bf16 (one row each, ours beside ONNX Runtime's same precision where it has one; its float32 always runs); bf16 only where the CPU has a bfloat16 instruction (AVX512_BF16 or AMX): elsewhere the table says why it has no bf16 row")
		fs.IntVar(&so.threads, "threads", 2, "GOMAXPROCS for ours, intra-op threads for ONNX Runtime")
		fs.IntVar(&so.iters, "iters", 30, "timed runs at batch 1, after the warm-up ones")
		fs.IntVar(&so.batchIters, "batch-iters", 5, "timed runs at batch 8 and at batch 32")
		fs.IntVar(&so.warmup, "warmup", 3, "untimed runs of ours before the timed ones at each batch (ort_bench.js always runs 3)")
		fs.IntVar(&so.rounds, "rounds", 3, "measurements of ours and ONNX Runtime per model, alternating (ours first in odd rounds); the table gives medians")
		fs.Uint64Var(&so.seed, "seed", 0, "seeds our random weights and input")
		fs.BoolVar(&so.ort, "ort", true, "also run ONNX Runtime (ort_bench.js under node)")
		fs.StringVar(&so.ortDir, "ort-dir", filepath.Join("..", "scratch", "ort"), "scratch folder holding node_modules/onnxruntime-node and the exported models (m/MODEL.onnx, exported when missing)")
		fs.StringVar(&so.ortScript, "ort-script", filepath.Join("..", "shared", "bench", "ort", "ort_bench.js"), "path of ort_bench.js (export_onnx.py is beside it)")
		fs.StringVar(&so.timm, "timm", filepath.Join("..", "scratch", "timm"), "timm's source tree (PYTHONPATH of export_onnx.py)")
		fs.StringVar(&so.node, "node", "node", "the Node.js binary (looked up on PATH)")
		fs.BoolVar(&so.pytorch, "pytorch", false, "also run PyTorch in float32 (torch_serving.py: timm's model under torch.inference_mode)")
		fs.StringVar(&so.torchScript, "torch-script", filepath.Join("experiments", "bench", "torch", "torch_serving.py"), "path of torch_serving.py")
		fs.StringVar(&so.python, "python", "/usr/bin/python3", "the interpreter that sees Debian's python3-torch and python3-onnx (export_onnx.py, quantize_dynamic.py)")
	},
	Measure: measureServingRun,
}

// wantsServing says whether the command line asks for the serving mode.
func wantsServing(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		name, val, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && name == "serving" && val != "false" {
			return true
		}
	}
	return false
}

// servingMain runs the serving mode; its files go to experiments/bench/serving
// unless -dir says otherwise.
func servingMain(args []string, stderr io.Writer) error {
	return servingExperiment.Run(append([]string{"-dir", filepath.Join("experiments", "bench", "serving")}, args...), stderr)
}

// timing is one side's time of one batch: the median and minimum of one
// run's time (ms) and images per second at the median.
type timing struct {
	Batch    int     `json:"batch"`
	MedianMs float64 `json:"median_ms"`
	MinMs    float64 `json:"min_ms"`
	ImgS     float64 `json:"img_per_s"`
}

// oursServing is what a modeServing child measured.
type oursServing struct {
	Precision graph.Precision `json:"precision"`
	Timings   []timing        `json:"timings"`
}

// ortLine is the JSON line ort_bench.js prints.
type ortLine struct {
	Peer     string  `json:"peer"` // "onnxruntime VERSION"
	Model    string  `json:"model"`
	Batch    int     `json:"batch"`
	Threads  int     `json:"threads"`
	MedianMs float64 `json:"median_ms"`
	MinMs    float64 `json:"min_ms"`
	ImgS     float64 `json:"img_per_s"`
	BLAS     string  `json:"blas,omitempty"` // torch_serving.py: the OpenBLAS core
}

// ORTOutputError is ort_bench.js output that is not the line it should be.
type ORTOutputError struct {
	Script string // the script that printed it
	Line   string // the offending line ("" when there was none)
	Reason string
}

func (e *ORTOutputError) Error() string {
	if e.Line == "" {
		return fmt.Sprintf("%s: %s", e.Script, e.Reason)
	}
	return fmt.Sprintf("%s: %s in %q", e.Script, e.Reason, e.Line)
}

// parseORT reads ort_bench.js's stdout: its last line that starts with "{",
// which must be a timing of batch at threads.
func parseORT(script string, out []byte, batch, threads int) (ortLine, error) {
	return parseTimingLine(script, "onnxruntime", out, batch, threads)
}

// parseTimingLine reads a peer script's stdout (ort_bench.js, torch_serving.py):
// its last line that starts with "{", which must be peer's timing of batch
// at threads.
func parseTimingLine(script, peer string, out []byte, batch, threads int) (ortLine, error) {
	var last string
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "{") {
			last = l
		}
	}
	bad := func(reason string) (ortLine, error) {
		return ortLine{}, &ORTOutputError{Script: script, Line: last, Reason: reason}
	}
	if last == "" {
		return bad("no JSON line")
	}
	var r ortLine
	if err := json.Unmarshal([]byte(last), &r); err != nil {
		return bad(err.Error())
	}
	switch {
	case !strings.HasPrefix(r.Peer, peer+" "):
		return bad(fmt.Sprintf(`key "peer": want "%s VERSION"`, peer))
	case r.Batch != batch:
		return bad(fmt.Sprintf(`key "batch": want %d`, batch))
	case r.Threads != threads:
		return bad(fmt.Sprintf(`key "threads": want %d`, threads))
	case !(r.MedianMs > 0) || math.IsInf(r.MedianMs, 0):
		return bad(`key "median_ms": want a positive time`)
	case !(r.MinMs > 0) || r.MinMs > r.MedianMs:
		return bad(`key "min_ms": want a positive time at most median_ms`)
	}
	return r, nil
}

// Version is the peer's version from the line's "peer".
func (r ortLine) Version() string { _, v, _ := strings.Cut(r.Peer, " "); return v }

// ortPeer is how to run ONNX Runtime, or why it cannot run (Skip).
type ortPeer struct {
	Node, Script, NodePath string
	Skip                   string // install advice when node or the package is missing; "" = runs
}

// probeORT finds node and onnxruntime-node in dir/node_modules; when
// either is missing, Skip says how to install it.
func probeORT(node, script, dir string) ortPeer {
	install := fmt.Sprintf("`mkdir -p %s && cd %s && npm install --ignore-scripts %s`", dir, dir, ortPackage)
	path, err := exec.LookPath(node)
	if err != nil {
		return ortPeer{Skip: fmt.Sprintf("node (%s) not found: install Node.js (Debian: `apt-get install nodejs npm`), then %s; the ONNX Runtime column is skipped", node, install)}
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "onnxruntime-node", "package.json")); err != nil {
		return ortPeer{Skip: fmt.Sprintf("onnxruntime-node not found in %s: install it with %s (or pass -ort-dir); the ONNX Runtime column is skipped", filepath.Join(dir, "node_modules"), install)}
	}
	if _, err := os.Stat(script); err != nil {
		return ortPeer{Skip: fmt.Sprintf("ort_bench.js not found (%v): pass -ort-script; the ONNX Runtime column is skipped", err)}
	}
	return ortPeer{Node: path, Script: script, NodePath: filepath.Join(dir, "node_modules")}
}

// run times model at batch with ort_bench.js.
func (p ortPeer) run(model string, batch, iters, threads int) (ortLine, error) {
	cmd := exec.Command(p.Node, p.Script, model, "--batch", strconv.Itoa(batch), "--iters", strconv.Itoa(iters), "--threads", strconv.Itoa(threads))
	cmd.Env = append(os.Environ(), "NODE_PATH="+p.NodePath)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return ortLine{}, fmt.Errorf("%s %s --batch %d: %w: %s", p.Script, model, batch, err, lastLines(stderr.String(), 5))
	}
	return parseORT(p.Script, out, batch, threads)
}

// exportModel makes sure dir/m/PRESET.onnx exists, exporting it with
// export_onnx.py (beside script) when missing; it returns the model's path.
func exportModel(python, script, timm, dir, preset string) (string, error) {
	path := filepath.Join(dir, "m", preset+".onnx")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	export := filepath.Join(filepath.Dir(script), "export_onnx.py")
	if _, err := os.Stat(filepath.Join(timm, "timm")); err != nil {
		return "", fmt.Errorf("%s is missing and timm's source is not at %s (pass -timm; see ../shared/bench/ort/README.md): %w", path, timm, err)
	}
	cmd := exec.Command(python, export, preset, filepath.Dir(path))
	cmd.Env = append(os.Environ(), "PYTHONPATH="+timm)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s %s: %w: %s", export, preset, err, lastLines(string(out), 5))
	}
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("%s did not write %s: %w", export, path, err)
	}
	return path, nil
}

// servingResults is what the serving mode measured.
type servingResults struct {
	harness.Machine
	Start           time.Time
	Wall            time.Duration
	Load, LoadAfter string
	GoVersion       string
	Threads         int
	Iters           int // timed runs at batch 1
	BatchIters      int // timed runs at batch 8 and 32
	Warmup, Rounds  int
	Kernel          string // kernels.ISA(): our float kernels
	Int8Kernel      string // kernels.Int8ISA(): our int8 tile
	// FP32Peak, Int8Peak and Int8SatPeak are kernels.FP32Peak, Int8Peak
	// and Int8SaturatingPeak on Threads threads, in G operations a second,
	// measured before the models (0: no such loop here): the ceiling
	// table's (ceiling.go).
	FP32Peak    float64 `json:",omitempty"`
	Int8Peak    float64 `json:",omitempty"`
	Int8SatPeak float64 `json:",omitempty"`
	// ORT is ONNX Runtime's version, "" when it did not run; ORTSkip says
	// why not and how to install it.
	ORT     string `json:",omitempty"`
	ORTSkip string `json:",omitempty"`
	// PyTorch is PyTorch's version and the OpenBLAS core it ran, "" when it
	// did not run (-pytorch).
	PyTorch string `json:",omitempty"`
	Notes   []string
	Rows    []servingRow
}

// servingRow is one model in one of our precisions, beside ONNX Runtime's
// same precision of the same model (ORT: its float32 export for fp32, the
// export quantized by ort/quantize_dynamic.py for int8; nil when it did
// not run) and, for int8, ONNX Runtime's float32 too (ORTFP32).
type servingRow struct {
	Model     string
	Precision graph.Precision
	// FLOPs is one image's matrix-product FLOPs in our serving graph,
	// Int8FLOPs those of them our int8 quantizes; PeerFLOPs and
	// PeerInt8FLOPs the same in timm's export (servingFLOPs).
	FLOPs, Int8FLOPs         float64     `json:",omitempty"`
	PeerFLOPs, PeerInt8FLOPs float64     `json:",omitempty"`
	Ours                     []timing    // per servingBatches: the median over the rounds of each round's median
	ORT                      []timing    `json:",omitempty"`
	ORTFP32                  []timing    `json:",omitempty"`
	OursMs                   [][]float64 // per batch, each round's median ms
	ORTMs                    [][]float64 `json:",omitempty"`
	ORTFP32Ms                [][]float64 `json:",omitempty"` // int8 rows: ONNX Runtime's float32 rounds
	// Torch is PyTorch's float32 (fp32 rows, -pytorch), TorchMs its rounds.
	Torch   []timing    `json:",omitempty"`
	TorchMs [][]float64 `json:",omitempty"`
}

// TorchCells are the PyTorch table's cells of an fp32 row: model, then per
// batch PyTorch's time (batch 1) or img/s and ours / PyTorch.
func (r servingRow) TorchCells() []string {
	c := []string{r.Model}
	for i, t := range r.Torch {
		if i >= len(r.Ours) {
			break
		}
		ratio := fmt.Sprintf("%.2f×", pairedRatio(r.Ours[i], t, roundsAt(r.OursMs, i), roundsAt(r.TorchMs, i)))
		if t.Batch == 1 {
			c = append(c, fmt.Sprintf("%.1f ms", t.MedianMs), ratio)
		} else {
			c = append(c, fmt.Sprintf("%.1f", t.ImgS), ratio)
		}
	}
	return c
}

// Busy says whether the load before the run was at or above quietLoad.
func (r servingResults) Busy() bool { return busy(r.Load) }

// Kernels names both sides' kernels and threads.
func (r servingResults) Kernels() string {
	s := fmt.Sprintf("our kernels.ISA() %s, int8 tile %s, GOMAXPROCS %d", r.Kernel, r.Int8Kernel, r.Threads)
	if r.ORT != "" {
		s += fmt.Sprintf("; ONNX Runtime %s: CPU execution provider (MLAS), all graph optimizations, %d intra-op threads", r.ORT, r.Threads)
	}
	return s
}

// Cells are the row's table cells: model, precision, then per batch ours,
// ONNX Runtime's in the same precision, ours / that, and ours / ONNX
// Runtime's float32 (time at batch 1, img/s at 8 and 32; "—" where ONNX
// Runtime did not run).
func (r servingRow) Cells() []string {
	c := []string{r.Model, string(r.Precision)}
	at := func(ts []timing, i, b int) *timing {
		if i < len(ts) && ts[i].Batch == b {
			return &ts[i]
		}
		return nil
	}
	fp32, fp32Ms := r.ORTFP32, r.ORTFP32Ms
	if r.Precision == graph.FP32 {
		fp32, fp32Ms = r.ORT, r.ORTMs
	}
	for i, b := range servingBatches {
		if i >= len(r.Ours) {
			c = append(c, "—", "—", "—", "—")
			continue
		}
		o := r.Ours[i]
		val := func(t timing) string { return fmt.Sprintf("%.1f", t.ImgS) }
		if b == 1 {
			val = func(t timing) string { return fmt.Sprintf("%.1f ms", t.MedianMs) }
		}
		ratio := func(t timing, peerMs [][]float64) string {
			return fmt.Sprintf("%.2f×", pairedRatio(o, t, roundsAt(r.OursMs, i), roundsAt(peerMs, i)))
		}
		c = append(c, val(o))
		if t := at(r.ORT, i, b); t != nil {
			c = append(c, val(*t), ratio(*t, r.ORTMs))
		} else {
			c = append(c, "—", "—")
		}
		if t := at(fp32, i, b); t != nil {
			c = append(c, ratio(*t, fp32Ms))
		} else {
			c = append(c, "—")
		}
	}
	return c
}

// RoundLines are the per-round table's lines: each row's rounds of ours,
// then ONNX Runtime's in the same precision, each a model, a side and per
// batch each round's median ms.
func (r servingResults) RoundLines() [][]string {
	line := func(model, side string, ms [][]float64) []string {
		c := []string{model, side}
		for _, v := range ms {
			var f []string
			for _, x := range v {
				f = append(f, fmt.Sprintf("%.1f", x))
			}
			c = append(c, strings.Join(f, ", "))
		}
		return c
	}
	var out [][]string
	for _, row := range r.Rows {
		out = append(out, line(row.Model, "ours "+string(row.Precision), row.OursMs))
		if row.ORTMs != nil {
			out = append(out, line(row.Model, "ONNX Runtime "+string(row.Precision), row.ORTMs))
		}
		if row.TorchMs != nil {
			out = append(out, line(row.Model, "PyTorch fp32", row.TorchMs))
		}
	}
	return out
}

// parseServingModels reads -models.
func parseServingModels(s string) ([]servingModel, error) {
	var out []servingModel
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		i := slices.IndexFunc(servingModels, func(m servingModel) bool { return m.Name == f || m.Preset == f })
		if i < 0 {
			return nil, fmt.Errorf("-models: unknown model %q (want ti, s or b)", f)
		}
		if !slices.Contains(out, servingModels[i]) {
			out = append(out, servingModels[i])
		}
	}
	return out, nil
}

// parseServingPrecisions reads -precision: fp32, int8 and bf16.
func parseServingPrecisions(s string) ([]graph.Precision, error) {
	var out []graph.Precision
	for _, f := range strings.Split(s, ",") {
		var p graph.Precision
		if err := p.Set(strings.TrimSpace(f)); err != nil {
			return nil, fmt.Errorf("-precision: %w", err)
		}
		if p != graph.FP32 && p != graph.INT8 && p != graph.BF16 {
			return nil, fmt.Errorf("-precision %s: the serving mode runs fp32, int8 and bf16", p)
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out, nil
}

// measureServingRun is the serving mode's Measure.
func measureServingRun(e *harness.Env) (servingResults, error) {
	models, err := parseServingModels(so.models)
	if err != nil {
		return servingResults{}, err
	}
	precs, err := parseServingPrecisions(so.precision)
	if err != nil {
		return servingResults{}, err
	}
	for _, f := range []struct {
		name   string
		v, min int
	}{{"-threads", so.threads, 1}, {"-iters", so.iters, 1}, {"-batch-iters", so.batchIters, 1}, {"-warmup", so.warmup, 1}, {"-rounds", so.rounds, 1}} {
		if f.v < f.min {
			return servingResults{}, fmt.Errorf("%s: must be at least %d, got %d", f.name, f.min, f.v)
		}
	}
	start := time.Now()
	var notes []string
	precs, notes = bf16Row(precs, notes)
	r := servingResults{Notes: notes, Machine: harness.DescribeMachine(), Start: start, Load: loadAverage(), GoVersion: runtime.Version(),
		Threads: so.threads, Iters: so.iters, BatchIters: so.batchIters, Warmup: so.warmup, Rounds: so.rounds,
		Kernel: kernels.ISA(), Int8Kernel: kernels.Int8ISA()}
	r.FP32Peak, _ = kernels.FP32Peak(so.threads)
	r.Int8Peak, _ = kernels.Int8Peak(so.threads)
	r.Int8SatPeak, _ = kernels.Int8SaturatingPeak(so.threads)
	e.Log.Infof("bench -serving: peaks on %d threads: fp32 %.0f GFLOP/s, int8 %.0f Gop/s, int8 saturating %.0f Gop/s (0: none here)", so.threads, r.FP32Peak, r.Int8Peak, r.Int8SatPeak)
	peer := ortPeer{Skip: "not asked for (-ort=false)"}
	if so.ort {
		peer = probeORT(so.node, so.ortScript, so.ortDir)
	}
	r.ORTSkip = peer.Skip
	if peer.Skip != "" {
		e.Log.Warnf("bench -serving: %s", peer.Skip)
	}
	e.Log.Infof("bench -serving: load %s, %d threads", r.Load, so.threads)
	if busy(r.Load) {
		e.Log.Warnf("bench -serving: 1-minute load %s ≥ %.1f: other processes share the cores, the numbers will be noisy", strings.Fields(r.Load)[0], quietLoad)
	}
	for _, m := range models {
		rows, note, err := measureServingModel(e, m, precs, peer, &r, start)
		if err != nil {
			return servingResults{}, err
		}
		if note != "" {
			r.Notes = append(r.Notes, note)
		}
		r.Rows = append(r.Rows, rows...)
	}
	r.LoadAfter = loadAverage()
	r.Wall = time.Since(start)
	return r, nil
}

// bf16Row drops bf16 from precs where the CPU runs its products emulated
// (no AVX512_BF16 or AMX: not a speed path), with a note saying so.
func bf16Row(precs []graph.Precision, notes []string) ([]graph.Precision, []string) {
	line, emulated := kernels.BF16KernelNote()
	if !slices.Contains(precs, graph.BF16) || !emulated {
		return precs, notes
	}
	return slices.DeleteFunc(precs, func(p graph.Precision) bool { return p == graph.BF16 }),
		append(notes, "no bf16 row: "+line)
}

// measureServingModel measures one model: ours in each precision, ONNX
// Runtime's float32 and int8 and (-pytorch) PyTorch's float32, so.rounds
// rounds in alternating order; the peers' versions go into res. note says
// why a peer did not run on this model.
func measureServingModel(e *harness.Env, m servingModel, precs []graph.Precision, peer ortPeer, res *servingResults, start time.Time) ([]servingRow, string, error) {
	rows := make([]servingRow, len(precs))
	var runs []func(int) error
	flops, int8 := servingFLOPs(layers.Presets[m.Preset], false)
	peerFLOPs, peerInt8 := servingFLOPs(layers.Presets[m.Preset], true)
	for i, p := range precs {
		rows[i] = servingRow{Model: m.Label, Precision: p, FLOPs: flops, Int8FLOPs: int8, PeerFLOPs: peerFLOPs, PeerInt8FLOPs: peerInt8,
			OursMs: make([][]float64, len(servingBatches))}
		r := &rows[i]
		runs = append(runs, func(round int) error {
			j := job{Mode: modeServing, Config: m.Preset, Steps: so.iters, BatchSteps: so.batchIters, Threads: so.threads, Warmup: so.warmup, Seed: so.seed, Precision: p}
			var res oursServing
			if err := runChild(j, &res, nil); err != nil {
				return fmt.Errorf("%s: ours %s: %w", m.Label, p, err)
			}
			for k, t := range res.Timings {
				r.OursMs[k] = append(r.OursMs[k], t.MedianMs)
			}
			e.Log.Infof("bench -serving: %s round %d ours %s: %s (%.0fs)", m.Label, round+1, p, timingsText(res.Timings), time.Since(start).Seconds())
			return nil
		})
	}
	ortMs, note := ortRuns(e, m, precs, peer, &res.ORT, start, &runs)
	var torchMs [][]float64
	if so.pytorch && slices.Contains(precs, graph.FP32) {
		torchMs = torchRuns(e, m, &res.PyTorch, start, &runs)
	}
	for round := range so.rounds {
		order := slices.Clone(runs)
		if round%2 == 1 {
			slices.Reverse(order)
		}
		for _, run := range order {
			if err := run(round); err != nil {
				return nil, "", err
			}
		}
	}
	for i := range rows {
		rows[i].Ours = medians(rows[i].OursMs)
		if ms := ortMs[rows[i].Precision]; ms != nil {
			rows[i].ORT, rows[i].ORTMs = medians(ms), ms
		}
		if ms := ortMs[graph.FP32]; ms != nil && rows[i].Precision != graph.FP32 {
			rows[i].ORTFP32, rows[i].ORTFP32Ms = medians(ms), ms
		}
		if torchMs != nil && rows[i].Precision == graph.FP32 {
			rows[i].Torch, rows[i].TorchMs = medians(torchMs), torchMs
		}
	}
	return rows, note, nil
}

// ortRuns adds to runs ONNX Runtime's rounds of model m: its float32
// export, and for int8 in precs the export quantized by
// quantize_dynamic.py. It returns where the rounds' medians go, by
// precision, and a note on what could not run.
func ortRuns(e *harness.Env, m servingModel, precs []graph.Precision, peer ortPeer, version *string, start time.Time, runs *[]func(int) error) (map[graph.Precision][][]float64, string) {
	out := map[graph.Precision][][]float64{}
	if peer.Skip != "" {
		return out, ""
	}
	var notes []string
	models := map[graph.Precision]string{}
	fp32, err := exportModel(so.python, peer.Script, so.timm, so.ortDir, m.Preset)
	if err != nil {
		notes = append(notes, fmt.Sprintf("%s: ONNX Runtime skipped: %v", m.Label, err))
	} else {
		models[graph.FP32] = fp32
		if slices.Contains(precs, graph.INT8) {
			if q, err := quantizeModel(so.python, fp32); err != nil {
				notes = append(notes, fmt.Sprintf("%s: ONNX Runtime int8 skipped: %v", m.Label, err))
			} else {
				models[graph.INT8] = q
			}
		}
	}
	for _, p := range []graph.Precision{graph.FP32, graph.INT8} {
		model, ok := models[p]
		if !ok {
			continue
		}
		ms := make([][]float64, len(servingBatches))
		out[p] = ms
		*runs = append(*runs, func(round int) error {
			var ts []timing
			for k, b := range servingBatches {
				l, err := peer.run(model, b, itersAt(b), so.threads)
				if err != nil {
					return fmt.Errorf("%s: ONNX Runtime %s: %w", m.Label, p, err)
				}
				*version = l.Version()
				ms[k] = append(ms[k], l.MedianMs)
				ts = append(ts, timing{Batch: b, MedianMs: l.MedianMs, MinMs: l.MinMs, ImgS: l.ImgS})
			}
			e.Log.Infof("bench -serving: %s round %d ONNX Runtime %s: %s (%.0fs)", m.Label, round+1, p, timingsText(ts), time.Since(start).Seconds())
			return nil
		})
	}
	for _, n := range notes {
		e.Log.Warnf("bench -serving: %s", n)
	}
	return out, strings.Join(notes, "; ")
}

// torchRuns adds to runs PyTorch's rounds of model m (torch_serving.py),
// each setting *version to what PyTorch says of itself, and returns where
// their medians go.
func torchRuns(e *harness.Env, m servingModel, version *string, start time.Time, runs *[]func(int) error) [][]float64 {
	ms := make([][]float64, len(servingBatches))
	*runs = append(*runs, func(round int) error {
		var ts []timing
		for k, b := range servingBatches {
			cmd := exec.Command(so.python, so.torchScript, m.Preset, "--batch", strconv.Itoa(b), "--iters", strconv.Itoa(itersAt(b)), "--threads", strconv.Itoa(so.threads))
			cmd.Env = append(os.Environ(), "PYTHONPATH="+so.timm)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				return fmt.Errorf("%s: PyTorch: %s %s --batch %d: %w: %s", m.Label, so.torchScript, m.Preset, b, err, lastLines(stderr.String(), 5))
			}
			l, err := parseTimingLine(so.torchScript, "pytorch", out, b, so.threads)
			if err != nil {
				return fmt.Errorf("%s: PyTorch: %w", m.Label, err)
			}
			*version = fmt.Sprintf("%s (OpenBLAS core %s)", l.Version(), l.BLAS)
			ms[k] = append(ms[k], l.MedianMs)
			ts = append(ts, timing{Batch: b, MedianMs: l.MedianMs, MinMs: l.MinMs, ImgS: l.ImgS})
		}
		e.Log.Infof("bench -serving: %s round %d PyTorch fp32: %s (%.0fs)", m.Label, round+1, timingsText(ts), time.Since(start).Seconds())
		return nil
	})
	return ms
}

// quantizeScript is ONNX Runtime's int8 peer: quantize_dynamic's graph
// written with Debian's python3-onnx (run from the repository root).
var quantizeScript = filepath.Join("experiments", "bench", "ort", "quantize_dynamic.py")

// quantizeModel makes sure NAME.int8.onnx exists beside the float32 export
// NAME.onnx, quantizing it with quantizeScript when missing or older than
// the export; it returns its path.
func quantizeModel(python, fp32 string) (string, error) {
	path := strings.TrimSuffix(fp32, ".onnx") + ".int8.onnx"
	src, err := os.Stat(fp32)
	if err != nil {
		return "", err
	}
	if st, err := os.Stat(path); err == nil && !st.ModTime().Before(src.ModTime()) {
		return path, nil
	}
	out, err := exec.Command(python, quantizeScript, fp32, path).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w: %s (it needs Debian's python3-onnx: `apt-get install python3-onnx`, or pass -python)", quantizeScript, fp32, err, lastLines(string(out), 3))
	}
	return path, nil
}

// itersAt is the number of timed runs at batch b.
func itersAt(b int) int {
	if b == 1 {
		return so.iters
	}
	return so.batchIters
}

// roundsAt is ms[i], each round's median at batch index i, or nil.
func roundsAt(ms [][]float64, i int) []float64 {
	if i < len(ms) {
		return ms[i]
	}
	return nil
}

// pairedRatio is ours against a peer at one batch size, as the tables give
// it: ours / the peer's time at batch 1, ours / the peer's img/s at 8 and
// 32. With each side's per-round medians (ours, peer: one per round, the
// rounds in the same order) it is the median over the rounds of that
// round's ratio: both sides ran within minutes of each other in a round, so
// a drift of the machine's speed between rounds, which moves both, cancels;
// a ratio of the two medians can pair ours in a fast round with the peer in
// a slow one. Without rounds (an older record) it is the ratio of the
// medians o and t.
func pairedRatio(o, t timing, ours, peer []float64) float64 {
	if len(ours) == 0 || len(ours) != len(peer) {
		if t.Batch == 1 {
			return o.MedianMs / t.MedianMs
		}
		return o.ImgS / t.ImgS
	}
	r := make([]float64, len(ours))
	for k := range ours {
		r[k] = ours[k] / peer[k] // time ratio
		if t.Batch != 1 {
			r[k] = peer[k] / ours[k] // img/s ratio: the same batch on both sides
		}
	}
	return median(r)
}

// medians is, per servingBatches, the median of each round's ms and the
// images per second at it.
func medians(ms [][]float64) []timing {
	out := make([]timing, len(ms))
	for k, v := range ms {
		s := slices.Clone(v)
		med := median(s) // sorts s
		out[k] = timing{Batch: servingBatches[k], MedianMs: med, MinMs: s[0], ImgS: 1000 * float64(servingBatches[k]) / med}
	}
	return out
}

func timingsText(ts []timing) string {
	var s []string
	for _, t := range ts {
		s = append(s, fmt.Sprintf("batch %d %.1f ms (%.1f img/s)", t.Batch, t.MedianMs, t.ImgS))
	}
	return strings.Join(s, ", ")
}

// measureServing is the modeServing child: a random model of preset
// j.Config, and at each batch of servingBatches (or j.Batch alone when set)
// the Frozen evaluator a classify lane runs at that batch
// (evaluate.NewFrozenIn with j.Precision), j.Warmup untimed runs then
// j.Steps (batch 1) or j.BatchSteps timed ones of Logits on one fixed
// normalised input: the graph run, with no decoding or preprocessing.
func measureServing(j job) (oursServing, error) {
	c, ok := layers.Presets[j.Config]
	if !ok {
		return oursServing{}, fmt.Errorf("%s: unknown preset %q", childEnv, j.Config)
	}
	runtime.GOMAXPROCS(j.Threads)
	m, err := layers.New(c, tensor.Float32, j.Seed)
	if err != nil {
		return oursServing{}, err
	}
	batches := servingBatches
	if j.Batch > 0 {
		batches = []int{j.Batch}
	}
	res := oursServing{Precision: j.Precision}
	rng := rand.New(rand.NewPCG(j.Seed, 11))
	for _, b := range batches {
		ev, err := evaluate.NewFrozenIn(m, b, graph.NewArena(), evaluate.WithPrecision(j.Precision))
		if err != nil {
			return oursServing{}, fmt.Errorf("batch %d: %w", b, err)
		}
		x := make([]float32, b*c.InChans*c.ImgSize[0]*c.ImgSize[1])
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		iters := j.Steps
		if b > 1 {
			iters = j.BatchSteps
		}
		t, err := timeRuns(b, j.Warmup, iters, func() error { _, err := ev.Logits(x, b); return err })
		ev.Close()
		if err != nil {
			return oursServing{}, fmt.Errorf("batch %d: %w", b, err)
		}
		res.Timings = append(res.Timings, t)
	}
	return res, nil
}

// timeRuns runs f warmup times untimed, then iters times timed, and
// returns the median and minimum time of one run at batch b.
func timeRuns(b, warmup, iters int, f func() error) (timing, error) {
	if iters < 1 {
		return timing{}, errors.New("no timed runs")
	}
	for range warmup {
		if err := f(); err != nil {
			return timing{}, err
		}
	}
	d := make([]float64, iters)
	for i := range d {
		t0 := time.Now()
		if err := f(); err != nil {
			return timing{}, err
		}
		d[i] = ms(time.Since(t0))
	}
	sort.Float64s(d)
	med := d[len(d)/2]
	return timing{Batch: b, MedianMs: med, MinMs: d[0], ImgS: 1000 * float64(b) / med}, nil
}
