package main

import (
	"math"
	"strings"
	"testing"
)

func TestWantsScaling(t *testing.T) {
	for args, want := range map[string]bool{"-scaling 1,2": true, "--scaling=1,2 -configs tiny": true, "-configs tiny": false, "-- -scaling": false} {
		if got := wantsScaling(strings.Fields(args)); got != want {
			t.Errorf("wantsScaling(%q) = %v", args, got)
		}
	}
	o, err := parseScaling([]string{"-scaling", "1,2", "-configs", "s16", "-steps", "1"}, &strings.Builder{})
	if err != nil || len(o.threads) != 2 || o.configs[0].Batch != 32 || o.configs[0].Steps != 1 {
		t.Errorf("parseScaling: %+v, %v", o, err)
	}
	for _, bad := range [][]string{{"-scaling", "0"}, {"-scaling", ""}, {"-configs", "x"}, {"-warmup", "0"}} {
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
	for _, k := range []string{"Linear", "LinearDw", "Attention", "AttentionGrad", "LayerNormDx", "Residual", partAdamW, partClip, partFinite, partRest} {
		if _, ok := res.Parts[k]; !ok {
			t.Errorf("no %q among the parts %v", k, res.Parts)
		}
	}
	if !(res.StepMs > 0) {
		t.Errorf("step %v ms", res.StepMs)
	}
}
