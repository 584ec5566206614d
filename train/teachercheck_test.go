package train

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vitgo/vit/checkpoint/safetensors"
	"github.com/vitgo/vit/data"
)

// editTensor rewrites tensor name of the model file path with edit.
func editTensor(t *testing.T, path, name string, edit func([]float32)) {
	t.Helper()
	f, err := safetensors.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for i, ts := range f.Tensors {
		if ts.Name == name {
			v, err := ts.Float32()
			if err != nil {
				t.Fatal(err)
			}
			edit(v)
			f.Tensors[i], found = safetensors.FromFloat32(ts.Name, ts.Shape, v), true
		}
	}
	if !found {
		t.Fatalf("%s has no %s", path, name)
	}
	if err := safetensors.Write(path, f.Tensors, f.Metadata); err != nil {
		t.Fatal(err)
	}
}

// overflowHead makes a teacher whose weights are finite and whose logits
// are not: every head weight 3e38.
func overflowHead(v []float32) {
	for i := range v {
		v[i] = 3e38
	}
}

// TestTeacherMustBeFinite: a teacher with a NaN weight is refused at load
// naming distill.teacher, the file and the tensor; a teacher whose weights
// are finite but whose logits are not (hard: argmax of NaN is class 0;
// soft) ends the run before step 1 with a *TeacherLogitsError naming
// distill.teacher, on one process and on every rank of two, and the error
// says that no checkpoint exists.
func TestTeacherMustBeFinite(t *testing.T) {
	for _, tc := range []struct {
		name   string
		typ    DistillType
		tensor string
		edit   func([]float32)
		ranks  int
	}{
		{"NaN weight, hard", DistillHard, "blocks.0.attn.qkv.weight", func(v []float32) { v[3] = float32(math.NaN()) }, 0},
		{"Inf weight, soft", DistillSoft, "head.bias", func(v []float32) { v[0] = float32(math.Inf(1)) }, 0},
		{"logits overflow, hard", DistillHard, "head.weight", overflowHead, 0},
		{"logits overflow, soft", DistillSoft, "head.weight", overflowHead, 0},
		{"logits overflow, hard, 2 ranks", DistillHard, "head.weight", overflowHead, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := distillRun(t)
			cfg.Distill.Type = tc.typ
			editTensor(t, cfg.Distill.Teacher, tc.tensor, tc.edit)
			_, errs := runRanks(t, context.Background(), cfg, tc.ranks, false)
			for r, err := range errs {
				var we *NonFiniteWeightError
				var le *TeacherLogitsError
				switch {
				case tc.tensor != "head.weight":
					if !errors.As(err, &we) || we.Tensor != tc.tensor || we.Key != "distill.teacher" || !strings.Contains(err.Error(), "distill.teacher "+cfg.Distill.Teacher) {
						t.Errorf("rank %d: %v, want a *NonFiniteWeightError naming distill.teacher, the file and %s", r, err, tc.tensor)
					}
				case !errors.As(err, &le) || le.Step != 0 || !strings.Contains(err.Error(), "distill.teacher"):
					t.Errorf("rank %d: %v, want a *TeacherLogitsError at step 0 naming distill.teacher", r, err)
				case tc.ranks > 1 && !slices.Equal(le.Ranks, []int{0, 1}):
					t.Errorf("rank %d: %v names ranks %v, want [0 1]", r, err, le.Ranks)
				case r == 0 && !strings.Contains(err.Error(), "no checkpoint was written"):
					t.Errorf("rank 0: %v, want it to say that there is no checkpoint", err)
				}
				t.Logf("rank %d: %v", r, err)
			}
			if _, err := os.Stat(filepath.Join(cfg.Train.OutDir, LastState)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s: %v, want none", LastState, err)
			}
		})
	}
}

// TestTeacherCheckedEveryBatch: a teacher whose logits turn non-finite at
// a later batch fails that step with a *TeacherLogitsError, before its
// update, and the error names the last good checkpoint's file.
func TestTeacherCheckedEveryBatch(t *testing.T) {
	cfg := distillRun(t)
	cfg.Distill.Type = DistillHard
	cfg.Checkpoint.EverySteps = 1
	opts := Options{Log: quietLog(), onStep: func(r *run, _ *data.Batch, _ StepStats) {
		if r.st.Step == 2 { // the teacher's inputs overflow from now on
			r.step.teacher.scale, r.step.teacher.shift = []float32{3e38}, []float32{0}
		}
	}}
	_, err := Run(context.Background(), cfg, opts)
	var le *TeacherLogitsError
	if !errors.As(err, &le) || le.Step != 2 {
		t.Fatalf("%v, want a *TeacherLogitsError at step 2", err)
	}
	if want := filepath.Join(cfg.Train.OutDir, LastState); !strings.Contains(err.Error(), "kept: "+want) {
		t.Errorf("%v, want it to name %s", err, want)
	}
	st, lerr := LoadState(filepath.Join(cfg.Train.OutDir, LastState))
	if lerr != nil || st.Step != 2 {
		t.Errorf("last checkpoint: step %d, %v; want step 2", st.Step, lerr)
	}
}

// TestNonFiniteInitFromRefused: a finetune.init_from file holding a NaN or
// an infinity is refused at load naming the file and the tensor.
func TestNonFiniteInitFromRefused(t *testing.T) {
	for _, v := range []float32{float32(math.NaN()), float32(math.Inf(-1))} {
		cfg := tinyRun(t)
		cfg.Finetune.InitFrom = poisonedCheckpoint(t, cfg, v)
		_, err := Run(context.Background(), cfg, Options{Log: quietLog()})
		var we *NonFiniteWeightError
		if !errors.As(err, &we) || we.Tensor != "head.bias" || we.Key != "finetune.init_from" || !strings.Contains(err.Error(), cfg.Finetune.InitFrom) {
			t.Errorf("%v: %v, want a *NonFiniteWeightError naming finetune.init_from, the file and head.bias", v, err)
		}
	}
}

// TestLastGoodCheckpointLine: a run that goes non-finite names the file of
// its last good checkpoint, or says that it wrote none.
func TestLastGoodCheckpointLine(t *testing.T) {
	for _, every := range []int{0, 1} {
		cfg := tinyRun(t)
		cfg.Optim.LR = 1e30
		cfg.Optim.WarmupEpochs.Set(0)
		cfg.Optim.ClipGrad.Set(0)
		cfg.Checkpoint.EverySteps = every
		_, err := Run(context.Background(), cfg, Options{Log: quietLog()})
		var nf *NonFiniteError
		if !errors.As(err, &nf) {
			t.Fatalf("every_steps %d: %v, want a *NonFiniteError", every, err)
		}
		path := filepath.Join(cfg.Train.OutDir, LastState)
		_, serr := os.Stat(path)
		switch {
		case every == 0 && (serr == nil || !strings.Contains(err.Error(), "no checkpoint was written")):
			t.Errorf("every_steps 0: %v (state file: %v), want no checkpoint, and the error to say so", err, serr)
		case every == 1 && (serr != nil || !strings.Contains(err.Error(), "kept: "+path)):
			t.Errorf("every_steps 1: %v (state file: %v), want the error to name %s", err, serr, path)
		}
		t.Logf("every_steps %d: %v", every, err)
	}
}

// TestTeacherSubnormalStdRefused: a teacher whose metadata records a std
// that is subnormal in float32 (its inputs, divided by it, overflow: NaN
// logits) is refused at load, naming distill.teacher, the file and std.
func TestTeacherSubnormalStdRefused(t *testing.T) {
	cfg := distillRun(t)
	f, err := safetensors.ReadFile(cfg.Distill.Teacher)
	if err != nil {
		t.Fatal(err)
	}
	for _, std := range []string{"[1e-40]", "[1e-300]"} {
		f.Metadata["mean"], f.Metadata["std"] = "[0.1]", std
		if err := safetensors.Write(cfg.Distill.Teacher, f.Tensors, f.Metadata); err != nil {
			t.Fatal(err)
		}
		_, err := LoadTeacher(cfg.Distill, cfg.Model)
		if !hasKey(err, "distill.teacher") || !strings.Contains(err.Error(), cfg.Distill.Teacher) || !strings.Contains(err.Error(), "std") {
			t.Errorf("std %s: %v, want an error naming distill.teacher, the file and std", std, err)
		}
	}
}
