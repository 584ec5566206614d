package main

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/vitgo/vit/experiments/internal/harness"
	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/graph/kernels"
)

func TestWantsServing(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{"-serving"}, true},
		{[]string{"--serving", "-models", "ti"}, true},
		{[]string{"-serving=true"}, true},
		{[]string{"-serving=false"}, false},
		{[]string{"-configs", "tiny"}, false},
		{[]string{"--", "-serving"}, false},
	} {
		if got := wantsServing(c.args); got != c.want {
			t.Errorf("wantsServing(%q) = %v, want %v", c.args, got, c.want)
		}
	}
}

// ort_bench.js's line is read from the last JSON line of its output, and a
// line that is not a timing of the batch and threads asked for is refused
// with a typed error that quotes it.
func TestParseORT(t *testing.T) {
	const good = `{"peer":"onnxruntime 1.30.0","model":"m.onnx","batch":8,"threads":2,"median_ms":690.5,"min_ms":680.1,"img_per_s":11.59}`
	for _, c := range []struct {
		name, out string
		batch     int
		ok        bool
	}{
		{"alone", good + "\n", 8, true},
		{"after a warning", "2026 [W:onnxruntime] something\n" + good + "\n", 8, true},
		{"empty", "", 8, false},
		{"no JSON", "Error: cannot find module\n", 8, false},
		{"truncated", `{"peer":"onnxruntime 1.30.0","batch":8`, 8, false},
		{"other batch", good, 1, false},
		{"other threads", strings.Replace(good, `"threads":2`, `"threads":1`, 1), 8, false},
		{"not onnxruntime", strings.Replace(good, "onnxruntime", "pytorch", 1), 8, false},
		{"zero median", strings.Replace(good, "690.5", "0", 1), 8, false},
		{"min above median", strings.Replace(good, "680.1", "700", 1), 8, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := parseORT("ort_bench.js", []byte(c.out), c.batch, 2)
			if c.ok {
				if err != nil {
					t.Fatal(err)
				}
				if r.Version() != "1.30.0" || r.MedianMs != 690.5 || r.MinMs != 680.1 || r.ImgS != 11.59 {
					t.Errorf("parsed %+v", r)
				}
				return
			}
			var oe *ORTOutputError
			if !errors.As(err, &oe) {
				t.Fatalf("err = %v, want an *ORTOutputError", err)
			}
			if oe.Script != "ort_bench.js" {
				t.Errorf("error names %q, want the script", oe.Script)
			}
		})
	}
}

// torch_serving.py's line is read by the same rules, with its own peer
// name and the OpenBLAS core it names.
func TestParseTorchLine(t *testing.T) {
	const good = `{"peer": "pytorch 1.13.0a0", "model": "vit_tiny_patch16_224", "batch": 1, "threads": 2, "median_ms": 72.7, "min_ms": 53.4, "img_per_s": 13.75, "blas": "Zen"}`
	r, err := parseTimingLine("torch_serving.py", "pytorch", []byte(good+"\n"), 1, 2)
	if err != nil || r.Version() != "1.13.0a0" || r.BLAS != "Zen" || r.MedianMs != 72.7 {
		t.Errorf("parsed %+v, %v", r, err)
	}
	if _, err := parseTimingLine("torch_serving.py", "pytorch", []byte(strings.Replace(good, "pytorch", "onnxruntime", 1)), 1, 2); err == nil {
		t.Error("an onnxruntime line read as PyTorch's")
	}
}

// fakeBin writes an executable shell script named name into dir.
func fakeBin(t *testing.T, dir, name, script string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// Without node on PATH, or without onnxruntime-node in -ort-dir, the peer
// is skipped with the install command; with both (a fake node here), it
// runs ort_bench.js with NODE_PATH set and reads its line.
func TestProbeORT(t *testing.T) {
	bin, ortDir := t.TempDir(), t.TempDir()
	script := filepath.Join(t.TempDir(), "ort_bench.js")
	if err := os.WriteFile(script, []byte("// fake"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	install := "npm install --ignore-scripts " + ortPackage

	p := probeORT("node", script, ortDir)
	if !strings.Contains(p.Skip, "node (node) not found") || !strings.Contains(p.Skip, "apt-get install nodejs") || !strings.Contains(p.Skip, install) {
		t.Errorf("no node: Skip = %q, want node's and the package's install advice", p.Skip)
	}

	// node prints its NODE_PATH and arguments on stderr, and a timing line.
	fakeBin(t, bin, "node", `echo "NODE_PATH=$NODE_PATH $*" >&2
echo '{"peer":"onnxruntime 1.30.0","model":"'$2'","batch":'$4',"threads":'$8',"median_ms":10,"min_ms":9,"img_per_s":100}'
`)
	p = probeORT("node", script, ortDir)
	if !strings.Contains(p.Skip, filepath.Join(ortDir, "node_modules")) || !strings.Contains(p.Skip, install) {
		t.Errorf("no package: Skip = %q, want where it looked and the install command", p.Skip)
	}

	pkg := filepath.Join(ortDir, "node_modules", "onnxruntime-node")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkg, "package.json"), []byte(`{"version":"1.30.0"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	p = probeORT("node", script, ortDir)
	if p.Skip != "" {
		t.Fatalf("with node and the package: Skip = %q", p.Skip)
	}
	l, err := p.run("m.onnx", 8, 5, 2)
	if err != nil {
		t.Fatal(err)
	}
	if l.Batch != 8 || l.Threads != 2 || l.Model != "m.onnx" || l.Version() != "1.30.0" {
		t.Errorf("run: %+v", l)
	}

	// A node that fails: the error names the script and quotes its stderr.
	fakeBin(t, bin, "node", "echo 'Error: no such model' >&2; exit 1\n")
	if _, err := p.run("m.onnx", 1, 5, 2); err == nil || !strings.Contains(err.Error(), "no such model") || !strings.Contains(err.Error(), script) {
		t.Errorf("failing node: err = %v", err)
	}
}

// renderServing renders the serving README from r through -render.
func renderServing(t *testing.T, r servingResults) string {
	t.Helper()
	dir := t.TempDir()
	b, err := json.Marshal(harness.Report[servingResults]{Command: "go run ./experiments/bench -serving=true", Wall: "1s", R: r})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, harness.ResultsFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := servingExperiment.Run([]string{"-render", "-dir", dir}, io.Discard); err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(dir, harness.ReadmeFile))
	if err != nil {
		t.Fatal(err)
	}
	return string(readme)
}

// The table names the CPU, both sides' kernels and threads and ONNX
// Runtime's version, has a row per (model, precision) with ONNX Runtime's
// same precision and the ratios to it and to ONNX Runtime's float32;
// without ONNX Runtime it gives the install advice and dashes in its
// columns.
func TestServingTable(t *testing.T) {
	ts := func(ms1, ms8, ms32 float64) []timing {
		return []timing{{1, ms1, ms1, 1000 / ms1}, {8, ms8, ms8, 8000 / ms8}, {32, ms32, ms32, 32000 / ms32}}
	}
	base := servingResults{Machine: testMachine, Load: "0.1 0.2 0.3", LoadAfter: "1 1 1", GoVersion: "go1.26.8", Threads: 2,
		Iters: 30, BatchIters: 5, Warmup: 3, Rounds: 3, Kernel: "avx2", Int8Kernel: "avx2"}
	with := base
	with.ORT = "1.30.0"
	with.PyTorch = "1.13.0a0 (OpenBLAS core Zen)"
	with.Rows = []servingRow{
		// Equal medians, but ours is the faster side in two of the three
		// rounds: the ratios are the per-round ones' median, not 1.
		{Model: "ViT-S/16", Precision: graph.FP32, Ours: ts(100, 750, 3000), ORT: ts(100, 750, 3000),
			OursMs: [][]float64{{80, 120, 100}, {600, 900, 750}, {2400, 3600, 3000}},
			ORTMs:  [][]float64{{100, 150, 80}, {750, 1125, 600}, {3000, 4500, 2400}},
			Torch:  ts(200, 1500, 6000), TorchMs: [][]float64{{160, 240, 200}, {1200, 1800, 1500}, {4800, 7200, 6000}}},
		{Model: "ViT-S/16", Precision: graph.INT8, Ours: ts(40, 300, 1200), ORT: ts(50, 400, 1600), ORTFP32: ts(100, 800, 3200),
			OursMs: [][]float64{{40}, {300}, {1200}}, ORTMs: [][]float64{{50}, {400}, {1600}}},
	}
	without := base
	without.ORTSkip = "node (node) not found: install Node.js"
	without.Rows = []servingRow{{Model: "ViT-Ti/16", Precision: graph.FP32, Ours: ts(30, 200, 800)}}
	for _, c := range []struct {
		name       string
		r          servingResults
		want, dont []string
	}{
		{"with ONNX Runtime", with, []string{
			"Test CPU 9000", "our kernels.ISA() avx2, int8 tile avx2, GOMAXPROCS 2",
			"ONNX Runtime 1.30.0: CPU execution provider (MLAS), all graph optimizations, 2 intra-op threads",
			"| ViT-S/16 | fp32 | 100.0 ms | 100.0 ms | 0.80× | 0.80× | 10.7 | 10.7 | 1.25× | 1.25× | 10.7 | 10.7 | 1.25× | 1.25× |",
			"| ViT-S/16 | int8 | 40.0 ms | 50.0 ms | 0.80× | 0.40× | 26.7 | 20.0 | 1.33× | 2.67× | 26.7 | 20.0 | 1.33× | 2.67× |",
			"PyTorch 1.13.0a0 (OpenBLAS core Zen), 2 threads, float32",
			"| ViT-S/16 | 200.0 ms | 0.50× | 5.3 | 2.00× | 5.3 | 2.00× |",
			"| ViT-S/16 | ours fp32 | 80.0, 120.0, 100.0 | 600.0, 900.0, 750.0 | 2400.0, 3600.0, 3000.0 |\n| ViT-S/16 | ONNX Runtime fp32 | 100.0, 150.0, 80.0 | 750.0, 1125.0, 600.0 | 3000.0, 4500.0, 2400.0 |\n| ViT-S/16 | PyTorch fp32 | 160.0, 240.0, 200.0 | 1200.0, 1800.0, 1500.0 | 4800.0, 7200.0, 6000.0 |\n| ViT-S/16 | ours int8 | 40.0 | 300.0 | 1200.0 |\n| ViT-S/16 | ONNX Runtime int8 | 50.0 | 400.0 | 1600.0 |",
		}, []string{"did not run"}},
		{"without", without, []string{
			"**ONNX Runtime did not run**: node (node) not found: install Node.js.",
			"| ViT-Ti/16 | fp32 | 30.0 ms | — | — | — | 40.0 | — | — | — | 40.0 | — | — | — |",
		}, []string{"ONNX Runtime 1", "PyTorch 1", "ours fp32 / PyTorch"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := renderServing(t, c.r)
			readmeHas(t, got, c.want, c.dont)
		})
	}
}

// The medians over the rounds, and img/s at them.
func TestServingMedians(t *testing.T) {
	got := medians([][]float64{{30, 10, 20}, {100, 200}, {1000}})
	want := []timing{{1, 20, 10, 50}, {8, 150, 100, 8000.0 / 150}, {32, 1000, 1000, 32}}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("batch %d: %+v, want %+v", want[i].Batch, got[i], want[i])
		}
	}
}

// The child times the Frozen graph at the batch asked for, in each
// precision (no timing is checked: only that it ran).
func TestMeasureServing(t *testing.T) {
	for _, p := range []graph.Precision{graph.FP32, graph.INT8} {
		r, err := measureServing(job{Mode: modeServing, Config: "vit_tiny_patch16_224", Batch: 1, Steps: 1, Warmup: 1, Threads: runtime.GOMAXPROCS(0), Precision: p})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Timings) != 1 || r.Timings[0].Batch != 1 || !(r.Timings[0].MedianMs > 0) || r.Precision != p {
			t.Errorf("%s: %+v", p, r)
		}
	}
	if _, err := measureServing(job{Mode: modeServing, Config: "vit_huge", Batch: 1, Steps: 1, Warmup: 1, Threads: 1}); err == nil {
		t.Error("unknown preset: no error")
	}
}

func TestServingFlags(t *testing.T) {
	if _, err := parseServingModels("ti,s,b,vit_small_patch16_224"); err != nil {
		t.Error(err)
	}
	if _, err := parseServingModels("ti,l"); err == nil {
		t.Error("-models l: no error")
	}
	if p, err := parseServingPrecisions("fp32,int8,fp32,bf16"); err != nil || len(p) != 3 {
		t.Errorf("fp32,int8,fp32,bf16: %v, %v", p, err)
	}
	if _, err := parseServingPrecisions("fp16"); err == nil {
		t.Error("-precision fp16: no error")
	}
	// Where bf16 is emulated, its row is dropped with the kernel's note;
	// where the CPU has a bfloat16 instruction, it stays.
	line, emulated := kernels.BF16KernelNote()
	p, notes := bf16Row([]graph.Precision{graph.FP32, graph.BF16}, nil)
	if emulated && (len(p) != 1 || len(notes) != 1 || !strings.Contains(notes[0], line) || !strings.Contains(notes[0], "emulated")) {
		t.Errorf("emulated bf16: precisions %v, notes %q", p, notes)
	}
	if !emulated && (len(p) != 2 || notes != nil) {
		t.Errorf("bf16 on %q: precisions %v, notes %q", line, p, notes)
	}
}

// TestServingReadme: the committed serving/README.md is the template's
// rendering of serving/results.json.
func TestServingReadme(t *testing.T) { servingExperiment.TestReadme(t, "serving") }

// ONNX Runtime's int8 model is made beside the float32 export by the
// quantizer when missing or older than the export, and reused otherwise; a
// quantizer that fails is an error naming python3-onnx.
func TestQuantizeModel(t *testing.T) {
	bin, dir := t.TempDir(), t.TempDir()
	fp32 := filepath.Join(dir, "vit_tiny_patch16_224.onnx")
	if err := os.WriteFile(fp32, []byte("model"), 0o644); err != nil {
		t.Fatal(err)
	}
	fakeBin(t, bin, "py", `[ "$1" = experiments/bench/ort/quantize_dynamic.py ] && [ "$2" = "`+fp32+`" ] && echo int8 > "$3" && echo "{}"`)
	fakeBin(t, bin, "broken", `echo "ModuleNotFoundError: No module named 'onnx'" >&2; exit 1`)
	q, err := quantizeModel(filepath.Join(bin, "py"), fp32)
	if want := filepath.Join(dir, "vit_tiny_patch16_224.int8.onnx"); err != nil || q != want {
		t.Fatalf("quantizeModel = %q, %v; want %q", q, err, want)
	}
	if b, err := os.ReadFile(q); err != nil || string(b) != "int8\n" {
		t.Fatalf("%s holds %q, %v: the quantizer did not write it", q, b, err)
	}
	if _, err := quantizeModel(filepath.Join(bin, "broken"), fp32); err != nil {
		t.Errorf("an up-to-date int8 model was quantized again: %v", err)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(fp32, later, later); err != nil {
		t.Fatal(err)
	}
	_, err = quantizeModel(filepath.Join(bin, "broken"), fp32)
	if err == nil || !strings.Contains(err.Error(), "python3-onnx") || !strings.Contains(err.Error(), "No module named 'onnx'") {
		t.Errorf("a newer export with a failing quantizer: %v, want an error naming python3-onnx and the quantizer's stderr", err)
	}
}

// readmeHas requires every string of want in a rendered README and none of
// dont.
func readmeHas(t *testing.T, got string, want, dont []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("README lacks %q:\n%s", w, got)
		}
	}
	for _, d := range dont {
		if strings.Contains(got, d) {
			t.Errorf("README has %q:\n%s", d, got)
		}
	}
}
