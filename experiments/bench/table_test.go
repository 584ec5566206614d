package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vitgo/vit/experiments/internal/harness"
)

// testMachine is a machine no test run is on: the tables must print what
// they are given, not this host.
var testMachine = harness.Machine{CPU: "Test CPU 9000", Cores: 4, L2: "1 MiB per core", Backend: "native avx512 14x32", Vector: "AVX-512 and AVX2"}

// renderTable renders the README from res (through -render, as a
// committed results.json is) and returns it.
func renderTable(t *testing.T, res results) string {
	t.Helper()
	dir := t.TempDir()
	b, err := json.Marshal(harness.Report[results]{Command: "go run ./experiments/bench -configs tiny", Wall: "1s", R: res})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, harness.ResultsFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := experiment.Run([]string{"-render", "-dir", dir}, io.Discard); err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(dir, harness.ReadmeFile))
	if err != nil {
		t.Fatal(err)
	}
	return string(readme)
}

// oneRow is a TINY result with peer p (nil: no peer), ours twice as fast.
func oneRow(p *peerResult) results {
	r := row{Cfg: benchConfigs["tiny"], Ours: stepsResult{Backend: testMachine.Backend, Params: 205066, TrainImgS: 2000, EvalImgS: 8000, StepMs: 64},
		OursRSS: 100 << 10, Peer: p,
		Floor: floorResult{Ms: map[string]float64{"Linear": 1, "Attention": 1, "LinearDx": 1, "LinearDw": 1, "AttentionGrad": 1},
			FLOPs: map[string]float64{"Linear": 1e9}, StepMs: 10, EvalStepMs: 4}}
	if p != nil {
		r.TrainRatios, r.EvalRatios = []float64{2}, []float64{2}
	}
	return results{Header: header{Machine: testMachine, Start: time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC), Wall: time.Minute,
		Load: "0.10 0.20 0.30", LoadAfter: "1.00 1.00 1.00", GoVersion: "go1.26.8", Threads: 2, Batch: 128, Steps: 30, Warmup: 3, Rounds: 1},
		Rows: []row{r}}
}

// The table names the machine (CPU, cores, L2, our SGEMM and vector
// kernels) and, in the ratio table, the peer's torch, BLAS library and
// OpenBLAS core; a peer on a generic core is marked in both tables and
// explained under them, and one on its proper core is not.
func TestTableNamesMachineAndPeer(t *testing.T) {
	peer := func(core, chosen string) *peerResult {
		return &peerResult{TrainImgS: 1000, EvalImgS: 4000, Torch: "torch 2.1.0", BLAS: "/usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3",
			BLASCore: core, BLASChosen: chosen, RSS: 200 << 10}
	}
	const machineLine = "Measured 2026-12-03 on Test CPU 9000 (4 logical CPUs, L2 1 MiB per core); ours: native avx512 14x32 SGEMM, AVX-512 and AVX2 vector kernels; go1.26.8; GOMAXPROCS"
	const ratios = "| TINY (d64 L4 h4) | **2.00** (2.00) | **2.00** (2.00) | 0.50 | "
	for _, tc := range []struct {
		name     string
		peer     *peerResult
		lines    []string // whole lines the table must have
		fallback bool
	}{
		{"proper core", peer("SkylakeX", ""), []string{
			ratios + "torch 2.1.0, openblas-openmp/libblas.so.3, OpenBLAS core SkylakeX |",
			"| TINY (d64 L4 h4) | PyTorch | 205066 | 1000 | 4000 | 67.0 | 89.3 | 128.0 | — | 200 |",
		}, false},
		{"overridden core", peer("Cooperlake", "Prescott"), []string{
			ratios + "torch 2.1.0, openblas-openmp/libblas.so.3, OpenBLAS core Cooperlake (set by vit_ref.py; OpenBLAS chose Prescott) |",
		}, false},
		{"generic core", peer("Prescott", ""), []string{
			ratios + "torch 2.1.0, openblas-openmp/libblas.so.3, OpenBLAS core Prescott **†** |",
			"| TINY (d64 L4 h4) | PyTorch † | 205066 | 1000 | 4000 | 67.0 | 89.3 | 128.0 | — | 200 |",
		}, true},
		{"core not reported", peer("", ""), []string{
			ratios + "torch 2.1.0, openblas-openmp/libblas.so.3, BLAS core not reported |",
		}, false},
		{"no peer", nil, []string{
			"| TINY (d64 L4 h4) | ours | 205066 | 2000 | 8000 | 133.9 | 178.6 | 64.0 | 50 % | 100 |",
		}, false},
	} {
		readme := renderTable(t, oneRow(tc.peer))
		lines := strings.Split(readme, "\n")
		has := func(want string) bool {
			for _, l := range lines {
				if l == want {
					return true
				}
			}
			return false
		}
		if !strings.Contains(readme, machineLine) {
			t.Errorf("%s: no machine line %q in\n%s", tc.name, machineLine, latest(readme))
		}
		for _, want := range tc.lines {
			if !has(want) {
				t.Errorf("%s: no line\n%s\nin\n%s", tc.name, want, latest(readme))
			}
		}
		if got := strings.Contains(readme, "† **Not a comparison**"); got != tc.fallback {
			t.Errorf("%s: footnote shown %v, want %v:\n%s", tc.name, got, tc.fallback, latest(readme))
		}
		if got := strings.Count(latest(readme), "†"); !tc.fallback && got != 0 {
			t.Errorf("%s: %d † marks without a generic core:\n%s", tc.name, got, latest(readme))
		}
	}
}

// A run's header describes this machine (the tables print it).
func TestHeaderDescribesMachine(t *testing.T) {
	o := opts{configs: "tiny", rounds: 2, threads: 2, warmup: 3}
	cs, err := o.check()
	if err != nil {
		t.Fatal(err)
	}
	h := o.header(cs, time.Now())
	if want := harness.DescribeMachine(); h.Machine != want || h.Rounds != 2 || h.Batch != 128 || h.Steps != 30 {
		t.Errorf("header %+v, want machine %+v, 2 rounds, batch 128, 30 steps", h, want)
	}
}

// latest is the README's "Latest table" section, for failure messages.
func latest(readme string) string {
	_, s, _ := strings.Cut(readme, "## Latest table")
	s, _, _ = strings.Cut(s, "\n## ")
	return s
}

// A generic pre-AVX OpenBLAS family is a fallback, whatever its case; the
// AVX families and an unreported core are not.
func TestPeerFallback(t *testing.T) {
	for core, want := range map[string]bool{
		"Prescott": true, "Core2": true, "Katmai": true, "Nehalem": true, "generic": true, "GENERIC": true, "Unknown": true,
		"Haswell": false, "SkylakeX": false, "Cooperlake": false, "Zen": false, "SapphireRapids": false, "": false,
	} {
		if got := (peerResult{BLASCore: core}).Fallback(); got != want {
			t.Errorf("core %q: Fallback() = %v, want %v", core, got, want)
		}
	}
}

// The scaling sweep's paragraph names the machine above its tables.
func TestSweepHeaderNamesMachine(t *testing.T) {
	var b bytes.Buffer
	sweepRun{Args: []string{"-threads", "1,2", "-configs", "tiny"}, Start: time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC), Machine: testMachine,
		GoVersion: "go1.26.8", Warmup: 1, Configs: []benchConfig{benchConfigs["tiny"]}, Rounds: 2, What: "(rounds × steps) of paired steps",
		Load: "2.00 1.00 1.00", LoadAfter: "2.10 1.10 1.00", Wall: 61 * time.Second}.write(&b)
	want := "`go run -tags parallelrecord ./experiments/bench -threads 1,2 -configs tiny`: measured 2026-12-03 10:00, go1.26.8; 1 warm-up steps, then tiny batch 128, 2×30 (rounds × steps) of paired steps; " +
		"load average (1, 5, 15 min) 2.00 1.00 1.00 before, 2.10 1.10 1.00 after; 61 s.\n\n" +
		"Machine: Test CPU 9000 (4 logical CPUs, L2 1 MiB per core); ours: native avx512 14x32 SGEMM, AVX-512 and AVX2 vector kernels.\n\n" +
		"**The machine was busy (1-minute load ≥ 1.5): other processes shared the cores, so the speedups and the serial fraction are those of a loaded machine.**\n\n"
	if got := b.String(); got != want {
		t.Errorf("sweep header\n got %q\nwant %q", got, want)
	}
}
