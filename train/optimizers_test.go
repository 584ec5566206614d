package train

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/internal/cfgerr"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/optim"
)

// legacyState is a training-state file written by AdamW before optimizers
// were a table (one step of tinyRun with layer decay 0.75 and the EMA).
const legacyState = "testdata/state_adamw_before_optimizer_room.train.safetensors"

// TestLegacyAdamWState: a state file written before the optimizer room
// loads with AdamW's slots "m" and "v" (M and V), is written back byte for
// byte, restores into an AdamW step, and is refused by an SGD step with a
// *OptimizerChangeError wrapping optim.ErrSlots.
func TestLegacyAdamWState(t *testing.T) {
	st, err := LoadState(legacyState)
	if err != nil {
		t.Fatal(err)
	}
	if st.OptStep != 1 || len(st.Slots) != 2 || len(st.M) == 0 || len(st.M) != len(st.V) {
		t.Fatalf("optim step %d, %d slots, %d m and %d v buffers", st.OptStep, len(st.Slots), len(st.M), len(st.V))
	}
	out := filepath.Join(t.TempDir(), "again.train.safetensors")
	if err := SaveState(out, st); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(legacyState)
	b, _ := os.ReadFile(out)
	if !bytes.Equal(a, b) {
		t.Errorf("rewritten state file differs (%d vs %d bytes)", len(a), len(b))
	}
	cfg, err := ParseConfig([]byte(st.Config), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		opt     optim.OptName
		refused bool
	}{{optim.OptAdamW, false}, {optim.OptSGD, true}, {optim.OptLamb, true}} {
		m, err := layers.New(cfg.Model, tensor.Float32, 0)
		if err != nil {
			t.Fatal(err)
		}
		oc := cfg.Optim
		oc.Opt = tc.opt
		s, err := NewStep(m, StepConfig{Batch: 8, Optim: oc, StepsPerEpoch: 8, TotalSteps: 16})
		if err != nil {
			t.Fatal(err)
		}
		err = s.Restore(st)
		s.Close()
		var oce *OptimizerChangeError
		if got := errors.As(err, &oce) && errors.Is(err, optim.ErrSlots); got != tc.refused || (!tc.refused && err != nil) {
			t.Errorf("%s: restore: %v", tc.opt, err)
		}
	}
}

// optimizerRun is tinyRun with optimizer opt and everything a step does
// around it on: layer decay, the no-decay groups, clipping (optim.clip_grad
// 1 by default), the EMA, a frozen patch embedding and two micro-batches.
func optimizerRun(t *testing.T, opt optim.OptName, steps int) Config {
	cfg := tinyRun(t)
	cfg.Optim.Opt, cfg.Optim.LayerDecay, cfg.Optim.EMA = opt, 0.75, true
	cfg.Finetune.Freeze = []string{"patch_embed.*"}
	cfg.Train.GradAccumSteps, cfg.Train.MaxSteps, cfg.Train.LogEvery = 2, steps, 1
	return cfg
}

// TestOptimizersTrainAndResume: each optimizer trains through train.Run
// with layer decay, clipping, the EMA, freezing and gradient accumulation;
// a run stopped after 2 steps and resumed to 4 ends bit for bit where the
// uninterrupted run does; the same resume on 2 in-process ranks (rank 0's
// state shared with the other, the frozen tensors having no slots) ends
// there to float32 summation order; the frozen tensors keep no optimizer
// state; and a resume under another optimizer is refused, naming optim.opt.
func TestOptimizersTrainAndResume(t *testing.T) {
	ctx := context.Background()
	for _, opt := range []optim.OptName{optim.OptAdamW, optim.OptSGD, optim.OptMomentum, optim.OptLamb} {
		t.Run(string(opt), func(t *testing.T) {
			ref := optimizerRun(t, opt, 4)
			_, errs := runRanks(t, ctx, ref, 0, false)
			noErrors(t, "uninterrupted", errs)
			st, err := LoadState(filepath.Join(ref.Train.OutDir, LastState))
			if err != nil {
				t.Fatal(err)
			}
			want := map[optim.OptName]int{optim.OptAdamW: 2, optim.OptSGD: 1, optim.OptMomentum: 1, optim.OptLamb: 2}[opt]
			if len(st.Slots) != want || (st.M != nil) != (opt == optim.OptAdamW) || st.OptStep != 4 {
				t.Fatalf("%d slots (want %d), M %v, optim step %d", len(st.Slots), want, st.M != nil, st.OptStep)
			}
			for slot, bufs := range st.Slots {
				for name := range bufs {
					if strings.HasPrefix(name, "patch_embed.") {
						t.Errorf("slot %s holds the frozen %s", slot, name)
					}
				}
			}

			half := ref
			half.Train.OutDir, half.Train.MaxSteps = t.TempDir(), 2
			_, errs = runRanks(t, ctx, half, 0, false)
			noErrors(t, "first half", errs)
			ranks := half
			ranks.Train.OutDir = t.TempDir()
			if err := os.CopyFS(ranks.Train.OutDir, os.DirFS(half.Train.OutDir)); err != nil {
				t.Fatal(err)
			}

			resumed := half
			resumed.Train.MaxSteps = 4
			_, errs = runRanks(t, ctx, resumed, 0, true)
			noErrors(t, "resumed", errs)
			sameWeightsAndState(t, ref.Train.OutDir, resumed.Train.OutDir)

			ranks.Train.MaxSteps = 4
			_, errs = runRanks(t, ctx, ranks, 2, true)
			noErrors(t, "resumed on 2 ranks", errs)
			if d, at := maxRelDiff(t, finalWeights(t, ref.Train.OutDir), finalWeights(t, ranks.Train.OutDir)); d > 1e-4 {
				t.Errorf("2 ranks: relative max |Δ| %.3g at %s exceeds 1e-4", d, at)
			}

			other := half
			other.Optim.Opt = optim.OptAdamW
			if opt == optim.OptAdamW {
				other.Optim.Opt = optim.OptSGD
			}
			other.Train.MaxSteps = 4
			_, errs = runRanks(t, ctx, other, 0, true)
			var rce *ResumeConfigError
			named := false
			if errors.As(errs[0], &rce) {
				for _, c := range rce.Changes {
					named = named || (c.Key == "optim.opt" && c.Why != "")
				}
			}
			if !named {
				t.Errorf("resume under optim.opt %s: %v, want a *ResumeConfigError naming optim.opt", other.Optim.Opt, errs[0])
			}
		})
	}
}

// sameWeightsAndState requires the run in dir to end where the run in ref
// did: weights, EMA weights and every optimizer slot bit for bit, at the
// same steps.
func sameWeightsAndState(t *testing.T, ref, dir string) {
	t.Helper()
	sameWeights(t, finalWeights(t, ref), finalWeights(t, dir))
	a, err := LoadState(filepath.Join(ref, LastState))
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadState(filepath.Join(dir, LastState))
	if err != nil {
		t.Fatal(err)
	}
	if a.OptStep != b.OptStep || a.Step != b.Step || len(a.Slots) != len(b.Slots) {
		t.Fatalf("optimizer step %d vs %d, step %d vs %d, %d vs %d slots", a.OptStep, b.OptStep, a.Step, b.Step, len(a.Slots), len(b.Slots))
	}
	sameWeights(t, a.EMA, b.EMA)
	for slot := range a.Slots {
		sameWeights(t, a.Slots[slot], b.Slots[slot])
	}
}

// TestOptimizerKeys: optim.opt and optim.momentum read from YAML and -set;
// the SGD optimizers resolve momentum to 0.9, AdamW leaves it out, and a
// momentum for an optimizer without one is refused naming the key.
func TestOptimizerKeys(t *testing.T) {
	tests := []struct {
		yaml     string
		set      []string
		momentum string // in the resolved YAML; "" = absent
		errHas   string
	}{
		{"optim:\n  opt: sgd\n", nil, "momentum: 0.9", ""},
		{"optim:\n  opt: momentum\n", []string{"optim.momentum=0"}, "momentum: 0", ""},
		{"optim:\n  opt: nesterov\n  momentum: 0.5\n", nil, "momentum: 0.5", ""},
		{"optim:\n  opt: lamb\n", nil, "", ""},
		{"optim:\n  lr: 0.01\n", nil, "", ""},
		{"optim:\n  opt: adamw\n  momentum: 0.9\n", nil, "", "optim.momentum"},
		{"optim:\n  opt: sgd\n", []string{"optim.opt=adam"}, "", "optim.opt"},
	}
	for _, tc := range tests {
		cfg, err := ParseConfig([]byte(tc.yaml), tc.set)
		if tc.errHas != "" {
			var keys []string
			lined := true // a key from the file names its line
			cfgerr.Walk(err, func(e *cfgerr.Error) { keys, lined = append(keys, e.Key), lined && (tc.set != nil || e.Line > 0) })
			if len(keys) != 1 || keys[0] != tc.errHas || !lined {
				t.Errorf("%q %v: %v (keys %q), want a *cfgerr.Error naming %s", tc.yaml, tc.set, err, keys, tc.errHas)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q %v: %v", tc.yaml, tc.set, err)
		}
		b, err := cfg.YAML()
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(b), "    momentum:"); got != (tc.momentum != "") || (got && !strings.Contains(string(b), "    "+tc.momentum+"\n")) {
			t.Errorf("%q %v: resolved optim section\n%s\nwant %q", tc.yaml, tc.set, b, tc.momentum)
		}
	}
}
