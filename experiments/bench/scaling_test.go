package main

import (
	"errors"
	"io"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/vitgo/vit/internal/parallel"
)

func TestWantsScaling(t *testing.T) {
	for args, want := range map[string]bool{"-scaling 1,2": true, "--scaling=1,2 -configs tiny": true, "-configs tiny": false, "-- -scaling": false,
		"-threads 1,2,4": true, "-threads=1,2": true, "-threads 2": false, "-threads=2 -configs s16": false, "-configs 1,2": false,
		"-simulate 1,16": true, "-simulate=1,2 -configs tiny": true, "-paired 1,2": true, "--paired=1,2 -configs s16": true} {
		if got := wantsScaling(strings.Fields(args)); got != want {
			t.Errorf("wantsScaling(%q) = %v", args, got)
		}
	}
	o, err := parseScaling([]string{"-scaling", "1,2", "-configs", "s16", "-steps", "1"}, &strings.Builder{})
	if err != nil || len(o.threads) != 2 || o.configs[0].Batch != 32 || o.configs[0].Steps != 1 {
		t.Errorf("parseScaling: %+v, %v", o, err)
	}
	if o, err := parseScaling([]string{"-threads", "1,2,4,8,16", "-configs", "s16"}, &strings.Builder{}); err != nil || len(o.threads) != 5 || o.threads[4] != 16 {
		t.Errorf("parseScaling -threads: %+v, %v", o, err)
	}
	if o, err := parseScaling([]string{"-simulate", "16,1,4"}, &strings.Builder{}); err != nil || o.measure || len(o.simulate) != 3 || o.simulate[0] != 1 || o.simulate[2] != 16 {
		t.Errorf("parseScaling -simulate alone: %+v, %v", o, err)
	}
	if o, err := parseScaling([]string{"-threads", "1,2", "-simulate", "1,4"}, &strings.Builder{}); err != nil || !o.measure || len(o.simulate) != 2 {
		t.Errorf("parseScaling -threads -simulate: %+v, %v", o, err)
	}
	if o, err := parseScaling([]string{"-paired", "1,2", "-configs", "tiny"}, &strings.Builder{}); err != nil || o.measure || len(o.paired) != 2 || o.paired[1] != 2 {
		t.Errorf("parseScaling -paired alone: %+v, %v", o, err)
	}
	for _, bad := range [][]string{{"-scaling", "0"}, {"-scaling", ""}, {"-configs", "x"}, {"-warmup", "0"}, {"-simulate", "2,4"}, {"-simulate", "1"}, {"-simulate", "1,x"},
		{"-paired", "2"}, {"-paired", "1,0"}} {
		if _, err := parseScaling(bad, &strings.Builder{}); err == nil {
			t.Errorf("parseScaling(%q): no error", bad)
		}
	}
}

func TestParseThreads(t *testing.T) {
	if got, err := parseThreads("1, 2,8"); err != nil || len(got) != 3 || got[0] != 1 || got[1] != 2 || got[2] != 8 {
		t.Errorf("parseThreads = %v, %v", got, err)
	}
	for _, bad := range []string{"0", "1,x", "-2"} {
		if _, err := parseThreads(bad); err == nil {
			t.Errorf("parseThreads(%q): no error", bad)
		}
	}
}

// The Amdahl fit recovers the serial fraction of times made by Amdahl's law,
// at 1→2 threads (where it is 2/r − 1) and at other pairs.
func TestSerialFraction(t *testing.T) {
	for _, s := range []float64{0, 0.03, 0.12, 0.5} {
		for _, p := range [][2]int{{1, 2}, {2, 8}, {1, 16}} {
			ta, tb := 100/amdahl(s, p[0]), 100/amdahl(s, p[1])
			if got := serialFraction(p[0], p[1], ta, tb); math.Abs(got-s) > 1e-12 {
				t.Errorf("s=%v threads %v: fit %v", s, p, got)
			}
		}
	}
	if r := 10 / 5.5; math.Abs(serialFraction(1, 2, 10, 5.5)-(2/r-1)) > 1e-12 {
		t.Error("1→2 fit is not 2/r − 1")
	}
}

// The replay of the training graph's ops in tape order is a real re-run:
// after a backward pass, replaying every op of ours gives the same
// gradients bit for bit, and the ops come forward first.
func TestReplayIsTheStep(t *testing.T) {
	c := benchConfigs["tiny"].model()
	c.EmbedDim, c.Depth, c.NumHeads = 16, 2, 2
	tr, err := newTrainer(c, job{Batch: 4, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.close()
	if _, err := tr.ts.Backward(tr.x, tr.tgt, 0); err != nil {
		t.Fatal(err)
	}
	tg := tr.ts.Graph()
	var want [][]float32
	for _, g := range tg.Grads {
		want = append(want, append([]float32(nil), g.Value().Data().([]float32)...))
		clear(g.Value().Data().([]float32))
	}
	ops, err := tapeOps(tg.G)
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) == 0 || backwardKind(ops[0].kind) || !backwardKind(ops[len(ops)-1].kind) {
		t.Fatalf("tape order: first %q, last %q", ops[0].kind, ops[len(ops)-1].kind)
	}
	for _, o := range ops {
		if strings.Contains(o.kind, "(") {
			t.Errorf("kind %q keeps its parameters", o.kind)
		}
		if _, err := o.node.Op().Do(o.inputs()...); err != nil {
			t.Fatalf("replay %s: %v", o.kind, err)
		}
	}
	for i, g := range tg.Grads {
		for k, v := range g.Value().Data().([]float32) {
			if math.Float32bits(v) != math.Float32bits(want[i][k]) {
				t.Fatalf("gradient %s[%d] = %v after the replay, %v in the step", tg.Params[i].Name(), k, v, want[i][k])
			}
		}
	}
}

func TestMeasureScalingParts(t *testing.T) {
	c := benchConfigs["tiny"].model()
	c.EmbedDim, c.Depth, c.NumHeads = 16, 1, 2
	res, err := measureScaling(c, job{Steps: 2, Batch: 4, Threads: 2, Warmup: 1})
	if err != nil {
		t.Fatal(err)
	}
	res = withRest(res)
	for _, k := range []string{"Linear", "LinearDw", "Attention", "AttentionGrad", "LayerNormDx", "Residual", partAdamW, partClip, partFinite, partRest} {
		if _, ok := res.Parts[k]; !ok {
			t.Errorf("no %q among the parts %v", k, res.Parts)
		}
	}
	if !(res.StepMs > 0) {
		t.Errorf("step %v ms", res.StepMs)
	}
}

// The simulation records the step and every part at GOMAXPROCS 4 on one
// core and projects them onto 4 cores: each simulated time is at most the
// recorded one and at least a quarter of it, and the step's passes are
// counted.
func TestMeasureSimulateParts(t *testing.T) {
	if !parallel.Recording {
		t.Skip("needs -tags parallelrecord")
	}
	c := benchConfigs["tiny"].model()
	c.EmbedDim, c.Depth, c.NumHeads = 16, 1, 2
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	res, err := measureSimulate(c, job{Steps: 2, Batch: 64, Threads: 4, Warmup: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"Linear", "LinearDw", "Attention", "AttentionGrad", "LayerNormDx", partAdamW} {
		rec, sim := res.Parts[k], res.SimParts[k]
		if !(rec > 0 && sim <= rec*1.0001 && sim >= rec/4*0.9999) {
			t.Errorf("%s: recorded %v ms, simulated %v ms on 4 cores", k, rec, sim)
		}
	}
	if !(res.SimStepMs <= res.StepMs*1.0001 && res.SimStepMs < res.StepMs) || res.Passes == 0 {
		t.Errorf("step: recorded %v ms, simulated %v ms, %d passes", res.StepMs, res.SimStepMs, res.Passes)
	}
	var b strings.Builder
	writeSimulation(&b, benchConfigs["tiny"], []simResult{{Threads: 1, StepMs: res.StepMs, Parts: res.Parts}, res})
	for _, want := range []string{"| 4 thr ms | speedup 1→4 |", "| **whole step** |", "whole step, the split alone", "| LinearDw |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

// Rounds merge to each part's minimum time and to the wall and CPU time
// summed over the rounds, from which the busy cores come; a part too short
// to read in one round counts once the rounds together are long enough; and
// the rest of the step is taken from the merged times, not any one round.
func TestMergeRounds(t *testing.T) {
	r1 := scalingResult{Threads: 2, StepMs: 100, Parts: map[string]float64{"Linear": 60, "GELU": 10},
		Tally: busyTally{"": {100, 180}, "Linear": {120, 228}, "GELU": {60, 90}}, PartWaitMs: map[string]float64{"Linear": 2, "GELU": 0.5}}
	r2 := scalingResult{Threads: 2, StepMs: 90, Parts: map[string]float64{"Linear": 65, "GELU": 8},
		Tally: busyTally{"": {90, 144}, "Linear": {130, 221}, "GELU": {50, 95}}, PartWaitMs: map[string]float64{"Linear": 1, "GELU": 0.25}}
	r3 := scalingResult{Threads: 2, StepMs: 95, Parts: map[string]float64{"Linear": 62}, PartWaitMs: map[string]float64{"Linear": 3}}
	if w := mergeRounds(mergeRounds(mergeRounds(scalingResult{}, r1, 0), r2, 1), r3, 2).PartWaitMs; w["Linear"] != 2 || w["GELU"] != 0.375 {
		// the mean over the rounds (every round times every part; r3 leaves GELU as it was)
		t.Errorf("waits merged to %v, want Linear 2 (the mean of 2, 1, 3) and GELU 0.375", w)
	}
	if r1.PartWaitMs["Linear"] != 2 {
		t.Errorf("merging changed the first round's waits: %v", r1.PartWaitMs)
	}
	got := withRest(mergeRounds(mergeRounds(scalingResult{}, r1, 0), r2, 1))
	want := map[string]float64{"Linear": 60, "GELU": 8, partRest: 90 - 60 - 8}
	if got.StepMs != 90 || len(got.Parts) != len(want) {
		t.Fatalf("merged %+v", got)
	}
	for k, v := range want {
		if got.Parts[k] != v {
			t.Errorf("%s: %v ms, want %v", k, got.Parts[k], v)
		}
	}
	for k, v := range map[string]float64{"": 324.0 / 190, "Linear": 449.0 / 250, "GELU": 185.0 / 110} {
		if c := got.Tally.cores(k); math.Abs(c-v) > 1e-12 {
			t.Errorf("%q: %v busy cores, want %v", k, c, v)
		}
	}
	if r1.Tally.cores("GELU") != 0 {
		t.Error("one round's 60 ms of GELU gave a busy-cores figure")
	}
	one := mergeRounds(mergeRounds(scalingResult{}, scalingResult{Threads: 1, StepMs: 190}, 0), scalingResult{Threads: 1, StepMs: 170}, 1)
	if len(got.RoundStepMs) != 2 || got.RoundStepMs[0] != 100 || got.RoundStepMs[1] != 90 {
		t.Errorf("round steps %v, want [100 90]", got.RoundStepMs)
	}
	if m := median(roundSpeedups(one, got)); math.Abs(m-(1.9+170.0/90)/2) > 1e-12 {
		t.Errorf("median of the rounds' speedups %v, want the mean of 1.9 and 1.89", m)
	}
	three := scalingResult{RoundStepMs: []float64{50, 100, 70}}
	if m := median(roundSpeedups(scalingResult{RoundStepMs: []float64{100, 150, 200}}, three)); m != 2 { // 2, 1.5, 2.857
		t.Errorf("median of three %v, want 2", m)
	}
	noClock := mergeRounds(mergeRounds(scalingResult{}, scalingResult{StepMs: 1, Parts: map[string]float64{}}, 0), r2, 1)
	if noClock.Tally.cores("Linear") != 221.0/130 {
		t.Errorf("a first round without a clock: %v", noClock.Tally)
	}
}

// busyTally divides each part's summed CPU time by its summed wall time,
// and gives nothing for parts too short to read.
func TestBusyTally(t *testing.T) {
	b := busyTally{}
	b.add("a", 100, 200)
	b.add("a", 300, 400)
	b.add("b", 0, 5)                  // no wall time: no figure
	b.add("c", minBusyWallMs-1, 5000) // too short to read: no figure
	if b.cores("a") != 1.5 || b.cores("b") != 0 || b.cores("c") != 0 || b.cores("none") != 0 {
		t.Errorf("cores: a %v, b %v, c %v, none %v; want 1.5, 0, 0, 0", b.cores("a"), b.cores("b"), b.cores("c"), b.cores("none"))
	}
}

// The process CPU clock moves forward with work, where the system has one.
func TestProcessCPU(t *testing.T) {
	c0, ok := processCPU()
	if !ok {
		t.Skip("no process CPU clock on this system")
	}
	x := 1.0
	for i := range 20_000_000 {
		x += math.Sqrt(float64(i))
	}
	c1, _ := processCPU()
	if c1 <= c0 || x == 0 {
		t.Errorf("process CPU time went from %v to %v over a busy loop", c0, c1)
	}
}

// A step whose busy cores come from Amdahl's law (one core busy for the
// serial part, n for the rest) gives back its serial fraction.
func TestBusySerialFraction(t *testing.T) {
	for _, s := range []float64{0, 0.03, 0.2, 1} {
		for _, n := range []int{2, 4, 16} {
			serialT, parallelT := s, (1-s)/float64(n) // time at n threads, one thread's step = 1
			busy := (serialT + float64(n)*parallelT) / (serialT + parallelT)
			if got := busySerialFraction(n, busy); math.Abs(got-s) > 1e-12 {
				t.Errorf("s=%v n=%d: busy %v gives %v", s, n, busy, got)
			}
		}
	}
	if !math.IsNaN(busySerialFraction(1, 1)) || !math.IsNaN(busySerialFraction(2, 0)) {
		t.Error("one thread, or no busy cores measured: want NaN")
	}
}

// Without the build tag parallelrecord the sweeps refuse to run: their
// wait, busy-core and simulated figures would read hooks that are not there.
func TestSweepsNeedTheRecordingBuild(t *testing.T) {
	if parallel.Recording {
		t.Skip("built with -tags parallelrecord")
	}
	for _, args := range [][]string{{"-threads", "1,2"}, {"-simulate", "1,2"}, {"-paired", "1,2"}} {
		err := scalingMain(append(args, "-configs", "tiny"), io.Discard, io.Discard)
		if !errors.Is(err, parallel.ErrNotRecording) {
			t.Errorf("%q: error %v, want parallel.ErrNotRecording", args, err)
		}
	}
}

// TestWriteScalingTable pins one config's scaling table: a column per
// thread count for ms, speedup and share, busy cores and waiting only at
// the counts that measured them, parts by falling time with the rest of the
// step last, and each round's speedups and the step's waiting below.
func TestWriteScalingTable(t *testing.T) {
	per := []scalingResult{
		{Threads: 1, StepMs: 100, Parts: map[string]float64{"Linear": 50, "LinearDW": 30, partAdamW: 5, partRest: 15}, RoundStepMs: []float64{100, 101, 99}},
		{Threads: 2, StepMs: 60, Parts: map[string]float64{"Linear": 28, "LinearDW": 17, partAdamW: 3, partRest: 12},
			Tally: busyTally{"": {600, 1100}, "Linear": {280, 540}}, StepWaitMs: 1.5, PartWaitMs: map[string]float64{"Linear": 0.5, "LinearDW": 0.25, partAdamW: 0.1}, RoundStepMs: []float64{61, 59, 60}},
		{Threads: 4, StepMs: 40, Parts: map[string]float64{"Linear": 16, "LinearDW": 11, partAdamW: 2, partRest: 11}, StepWaitMs: 2, RoundStepMs: []float64{40, 42}},
	}
	var b strings.Builder
	writeScaling(&b, benchConfig{Name: "tiny", Dim: 64, Depth: 4, Heads: 4, Img: 28, Patch: 7, Chans: 1, Batch: 128, Steps: 30}, per)
	want := "#### TINY (d64 L4 h4)\n" +
		"\n" +
		"| part | pass | 1 thr ms | 2 thr ms | 4 thr ms | speedup 1→2 | speedup 1→4 | share at 1 | share at 2 | share at 4 | busy cores at 2 | waited at 2 ms |\n" +
		"|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n" +
		"| Linear | fwd | 50.00 | 28.00 | 16.00 | 1.79× | 3.12× | 50.0 % | 46.7 % | 40.0 % | 1.93 | 0.50 |\n" +
		"| LinearDW | fwd | 30.00 | 17.00 | 11.00 | 1.76× | 2.73× | 30.0 % | 28.3 % | 27.5 % | — | 0.25 |\n" +
		"| AdamW | — | 5.00 | 3.00 | 2.00 | 1.67× | 2.50× | 5.0 % | 5.0 % | 5.0 % | — | 0.10 |\n" +
		"| rest of the step | — | 15.00 | 12.00 | 11.00 | 1.25× | 1.36× | 15.0 % | 20.0 % | 27.5 % | — | — |\n" +
		"| **whole step** |  | 100.00 | 60.00 | 40.00 | 1.67× | 2.50× | 100.0 % | 100.0 % | 100.0 % | 1.83 | 1.50 |\n" +
		"\n" +
		"Each round's own speedup of the step, 1→2 threads: 1.64, 1.71, 1.65; median 1.65×.\n" +
		"Each round's own speedup of the step, 1→4 threads: 2.50, 2.40; median 2.45×.\n" +
		"At 2 threads the step's goroutine waited 1.50 ms a step (2.5 % of the step, mean over the rounds) for the helpers' last chunks (`parallel.Waited`).\n" +
		"At 4 threads the step's goroutine waited 2.00 ms a step (5.0 % of the step, mean over the rounds) for the helpers' last chunks (`parallel.Waited`).\n" +
		"\n"
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
}
