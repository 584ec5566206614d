package train

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/checkpoint"
	"github.com/vitgo/vit/checkpoint/safetensors"
	"github.com/vitgo/vit/internal/enum"
	"github.com/vitgo/vit/internal/optional"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/optim"
)

// refDistill is DeiT's DistillationLoss in float64, written from its
// definition: the class head's soft-target cross entropy, and hard: the
// cross entropy of head_dist against the teacher's argmax; soft:
// kl_div(log_softmax(zd/τ), log_softmax(teacher/τ), reduction 'sum',
// log_target) · τ² / numel, i.e. Σ exp(t)·(t − s) over every element. It
// returns the loss and its gradients with respect to both heads' logits.
func refDistill(zc, zd, teacher, y []float64, c int, typ DistillType, alpha, tau float64) (float64, []float64, []float64) {
	rows := len(zc) / c
	logSoftmax := func(z []float64, tau float64) []float64 {
		mx := math.Inf(-1)
		for _, v := range z {
			mx = math.Max(mx, v/tau)
		}
		var s float64
		for _, v := range z {
			s += math.Exp(v/tau - mx)
		}
		out := make([]float64, len(z))
		for j, v := range z {
			out[j] = v/tau - mx - math.Log(s)
		}
		return out
	}
	var base, kd float64
	gc, gd := make([]float64, len(zc)), make([]float64, len(zd))
	for b := 0; b < rows; b++ {
		lc := logSoftmax(zc[b*c:(b+1)*c], 1)
		for j := range lc {
			base -= y[b*c+j] * lc[j] / float64(rows)
			gc[b*c+j] = (1 - alpha) * (math.Exp(lc[j]) - y[b*c+j]) / float64(rows)
		}
		if typ == DistillHard {
			best := 0
			for j := 1; j < c; j++ {
				if teacher[b*c+j] > teacher[b*c+best] {
					best = j
				}
			}
			ld := logSoftmax(zd[b*c:(b+1)*c], 1)
			kd -= ld[best] / float64(rows)
			for j := range ld {
				onehot := 0.0
				if j == best {
					onehot = 1
				}
				gd[b*c+j] = alpha * (math.Exp(ld[j]) - onehot) / float64(rows)
			}
			continue
		}
		s, tt := logSoftmax(zd[b*c:(b+1)*c], tau), logSoftmax(teacher[b*c:(b+1)*c], tau)
		for j := range s {
			kd += math.Exp(tt[j]) * (tt[j] - s[j]) * tau * tau / float64(len(zd))
			// d/dz of τ²/numel · Σ −p_t·log_softmax(z/τ) = τ/numel · (softmax(z/τ) − p_t)
			gd[b*c+j] = alpha * tau / float64(len(zd)) * (math.Exp(s[j]) - math.Exp(tt[j]))
		}
	}
	return (1-alpha)*base + alpha*kd, gc, gd
}

// TestDistillLossMatchesReference: the loss graph (buildKDLoss, its teacher
// side filled by fillKD) gives DeiT's loss and gradients, both types, in
// float64 and float32.
func TestDistillLossMatchesReference(t *testing.T) {
	const rows, c = 4, 5
	rng := rand.New(rand.NewPCG(1, 2))
	randn := func(n int, s float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = rng.NormFloat64() * s
		}
		return out
	}
	zc, zd, teacher := randn(rows*c, 2), randn(rows*c, 2), randn(rows*c, 3)
	y := make([]float64, rows*c) // label smoothing 0.1 around one class each, then a Mixup-like blend
	for b := 0; b < rows; b++ {
		for j := 0; j < c; j++ {
			y[b*c+j] = 0.1 / c
		}
		y[b*c+b%c] += 0.6
		y[b*c+(b+1)%c] += 0.3
	}
	for _, tc := range []struct {
		typ        DistillType
		alpha, tau float64
	}{{DistillHard, 0.5, 1}, {DistillHard, 0.2, 1}, {DistillSoft, 0.5, 1}, {DistillSoft, 0.3, 3}} {
		wantLoss, wantGc, wantGd := refDistill(zc, zd, teacher, y, c, tc.typ, tc.alpha, tc.tau)
		for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
			tol := 1e-12
			if dt == tensor.Float32 {
				tol = 2e-6
			}
			g := G.NewGraph()
			node := func(name string, v []float64) *G.Node {
				x := tensor.New(tensor.Of(dt), tensor.WithShape(rows, c))
				setFloats(x, v)
				return G.NewTensor(g, dt, 2, G.WithValue(x), G.WithName(name))
			}
			lg := &layers.Graph{G: g, Logits: node("head", zc), DistLogits: node("head_dist", zd)}
			loss, kd, err := buildKDLoss(lg, node("targets", y), DistillConfig{Type: tc.typ, Alpha: optional.FloatOf(tc.alpha), Tau: tc.tau})
			if err != nil {
				t.Fatal(err)
			}
			if dt == tensor.Float32 {
				tl := make([]float32, len(teacher))
				for i, v := range teacher {
					tl[i] = float32(v)
				}
				err = kd.fill(tl)
			} else {
				err = fillKD(kd, teacher)
			}
			if err != nil {
				t.Fatal(err)
			}
			grads, err := G.Grad(loss, lg.Logits, lg.DistLogits)
			if err != nil {
				t.Fatal(err)
			}
			vm := G.NewTapeMachine(g)
			if err := vm.RunAll(); err != nil {
				t.Fatal(err)
			}
			name := string(tc.typ) + " " + dt.String()
			if got := floats(loss.Value())[0]; math.Abs(got-wantLoss) > tol*max(1, math.Abs(wantLoss)) {
				t.Errorf("%s α %v τ %v: loss %.15g, reference %.15g", name, tc.alpha, tc.tau, got, wantLoss)
			}
			if d := maxAbsDiff(floats(grads[0].Value()), wantGc); d > tol {
				t.Errorf("%s α %v τ %v: class head gradient differs by %g", name, tc.alpha, tc.tau, d)
			}
			if d := maxAbsDiff(floats(grads[1].Value()), wantGd); d > tol {
				t.Errorf("%s α %v τ %v: head_dist gradient differs by %g", name, tc.alpha, tc.tau, d)
			}
			vm.Close()
		}
	}
}

// TestDistillConfigValidate: each bad distill value is a *ConfigError
// naming its key.
func TestDistillConfigValidate(t *testing.T) {
	student := layers.Config{Distilled: true}
	for _, tc := range []struct {
		name  string
		c     DistillConfig
		model layers.Config
		key   string
	}{
		{"bad type", DistillConfig{Type: "medium", Teacher: "t.safetensors"}, student, "distill.type"},
		{"alpha above 1", DistillConfig{Type: DistillSoft, Teacher: "t", Alpha: optional.FloatOf(1.5)}, student, "distill.alpha"},
		{"alpha below 0", DistillConfig{Type: DistillSoft, Teacher: "t", Alpha: optional.FloatOf(-0.1)}, student, "distill.alpha"},
		{"tau negative", DistillConfig{Type: DistillSoft, Teacher: "t", Tau: -1}, student, "distill.tau"},
		{"tau NaN", DistillConfig{Type: DistillSoft, Teacher: "t", Tau: math.NaN()}, student, "distill.tau"},
		{"tau 0 in float32", DistillConfig{Type: DistillSoft, Teacher: "t", Tau: 1e-300}, student, "distill.tau"},
		{"tau subnormal in float32", DistillConfig{Type: DistillSoft, Teacher: "t", Tau: 1e-40}, student, "distill.tau"},
		{"tau squared 0 in float32", DistillConfig{Type: DistillSoft, Teacher: "t", Tau: 1e-20}, student, "distill.tau"},
		{"no teacher", DistillConfig{Type: DistillHard}, student, "distill.teacher"},
		{"teacher without a type", DistillConfig{Teacher: "t"}, student, "distill.teacher"},
		{"student not distilled", DistillConfig{Type: DistillHard, Teacher: "t"}, layers.Config{}, "distill.type"},
		{"teacher heads", DistillConfig{Type: DistillHard, Teacher: "t", TeacherNumHeads: -2}, student, "distill.teacher_num_heads"},
	} {
		err := tc.c.Validate(tc.model)
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Key != tc.key {
			t.Errorf("%s: %v, want a *ConfigError for %s", tc.name, err, tc.key)
		}
	}
	var ee *enum.Error
	if err := (DistillConfig{Type: "medium"}).Validate(student); !errors.As(err, &ee) {
		t.Errorf("bad type: %v, want an *enum.Error inside", err)
	}
	if err := (DistillConfig{Type: DistillSoft, Teacher: "t", Alpha: optional.FloatOf(0), Tau: 4}).Validate(student); err != nil {
		t.Errorf("a valid section: %v", err)
	}
	// From YAML: an explicit tau 0 is refused like every zero that means a
	// default; a missing teacher file is refused naming the key.
	if _, err := ParseConfig([]byte("model:\n  distilled: true\ndistill:\n  type: soft\n  teacher: t\n  tau: 0\n"), nil); !hasKey(err, "distill.tau") {
		t.Errorf("tau: 0: %v, want an error naming distill.tau", err)
	}
	cfg := tinyRun(t)
	cfg.Model.Distilled = true
	cfg.Distill = DistillConfig{Type: DistillHard, Teacher: filepath.Join(t.TempDir(), "absent.safetensors")}
	if _, err := Run(context.Background(), cfg, Options{Log: quietLog()}); !hasKey(err, "distill.teacher") || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing teacher: %v, want a *ConfigError for distill.teacher wrapping ErrNotExist", err)
	}
}

func hasKey(err error, key string) bool {
	var ce *ConfigError
	return errors.As(err, &ce) && ce.Key == key
}

// writeTeacher saves a small non-distilled ViT of cfg's classes and
// channels at 14×14 (the student is 28×28: the teacher sees resized
// batches) as one of our checkpoints, its head non-zero, and returns its
// path.
func writeTeacher(t *testing.T, cfg Config) string {
	t.Helper()
	c := cfg.Model
	c.Distilled = false
	c.ImgSize, c.Depth, c.DropPathRate, c.Dropout = layers.Size2{14, 14}, 1, 0, 0
	c.ZeroInitHead.Set(false)
	m, err := layers.New(c, tensor.Float32, 11)
	if err != nil {
		t.Fatal(err)
	}
	layers.InitTruncNormal(m.Param("head.weight").Value, 1, rand.New(rand.NewPCG(5, 6)))
	path := filepath.Join(t.TempDir(), "teacher.safetensors")
	if err := checkpoint.SaveModel(path, m, checkpoint.ModelMeta{Weights: "raw"}, nil); err != nil {
		t.Fatal(err)
	}
	return path
}

// distillRun is tinyRun with a distilled student trained from a teacher
// (soft, τ 2) for four steps, with Mixup/CutMix on (tinyRun's) and EMA.
func distillRun(t *testing.T) Config {
	cfg := tinyRun(t)
	cfg.Model.Distilled = true
	cfg.Optim.EMA = true
	cfg.Train.MaxSteps = 4
	cfg.Distill = DistillConfig{Type: DistillSoft, Teacher: writeTeacher(t, cfg), Tau: 2}
	return cfg
}

// TestDistillRun: a run with a teacher is deterministic (two runs, the same
// weights bit for bit), trains head_dist (it starts at zero, and only the
// teacher's term reaches it), records the teacher's digest in the state
// file, matches one process on 2 ranks × 2 micro-batches (each rank's
// teacher labels its own rows), keeps an EMA of the new parameters too,
// and refuses to resume with a changed teacher file.
func TestDistillRun(t *testing.T) {
	ctx := context.Background()
	cfg := distillRun(t)
	_, errs := runRanks(t, ctx, cfg, 0, false)
	noErrors(t, "distilled run", errs)
	w := finalWeights(t, cfg.Train.OutDir)
	var norm float64
	for _, v := range w["head_dist.weight"] {
		norm += float64(v) * float64(v)
	}
	if norm == 0 {
		t.Fatal("head_dist.weight is still zero: the teacher's term never reached it")
	}
	ema, err := safetensors.ReadFile(filepath.Join(cfg.Train.OutDir, LastEMAModel))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"dist_token", "head_dist.weight", "head_dist.bias"} {
		if _, ok := ema.Get(name); !ok {
			t.Errorf("the EMA model file has no %s", name)
		}
	}

	again := cfg
	again.Train.OutDir = filepath.Join(t.TempDir(), "again")
	_, errs = runRanks(t, ctx, again, 0, false)
	noErrors(t, "second run", errs)
	if d, at := maxRelDiff(t, w, finalWeights(t, again.Train.OutDir)); d != 0 {
		t.Errorf("two identical distilled runs differ: %g at %s", d, at)
	}

	// Another teacher (its head re-drawn) trains another student.
	other := cfg
	other.Train.OutDir = filepath.Join(t.TempDir(), "other")
	other.Distill.Teacher = writeTeacherSeeded(t, cfg, 9)
	_, errs = runRanks(t, ctx, other, 0, false)
	noErrors(t, "other teacher", errs)
	if d, _ := maxRelDiff(t, w, finalWeights(t, other.Train.OutDir)); d == 0 {
		t.Error("another teacher trained the same student: the teacher's logits do not reach the loss")
	}

	md, err := safetensors.ReadMetadata(filepath.Join(cfg.Train.OutDir, LastState))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := checkpoint.FileSHA256(cfg.Distill.Teacher)
	if err != nil {
		t.Fatal(err)
	}
	if md["teacher_sha256"] != sum || !strings.Contains(md["config"], "teacher: "+cfg.Distill.Teacher) {
		t.Errorf("state file records teacher %q, sha256 %q; want %s, %s", md["config"], md["teacher_sha256"], cfg.Distill.Teacher, sum)
	}

	dp := cfg
	dp.Train.OutDir = filepath.Join(t.TempDir(), "dp")
	dp.Train.GradAccumSteps = 2
	_, errs = runRanks(t, ctx, dp, 2, false)
	noErrors(t, "2 ranks × 2 micro-batches", errs)
	if d, at := maxRelDiff(t, w, finalWeights(t, dp.Train.OutDir)); d > 1e-4 {
		t.Errorf("2 ranks × 2 micro-batches vs one process: relative max |Δ| %.3g at %s, want ≤ 1e-4", d, at)
	}

	// Resume refuses a teacher whose file changed under the same path.
	more := cfg
	more.Train.MaxSteps = 6
	raw, err := os.ReadFile(other.Distill.Teacher)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg.Distill.Teacher, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Run(ctx, more, Options{Log: quietLog(), Resume: true})
	var rce *ResumeConfigError
	if !errors.As(err, &rce) || len(rce.Changes) != 1 || rce.Changes[0].Key != "distill.teacher" {
		t.Fatalf("resume with a changed teacher: %v, want a *ResumeConfigError naming distill.teacher", err)
	}
}

// writeTeacherSeeded is writeTeacher with another head.
func writeTeacherSeeded(t *testing.T, cfg Config, seed uint64) string {
	t.Helper()
	path := writeTeacher(t, cfg)
	m, _, _, err := checkpoint.LoadModel(path, tensor.Float32, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	layers.InitTruncNormal(m.Param("head.weight").Value, 1, rand.New(rand.NewPCG(seed, 6)))
	if err := checkpoint.SaveModel(path, m, checkpoint.ModelMeta{Weights: "raw"}, nil); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDistillDryRun: the teacher's memory is a part of the estimate (and of
// its peak), and -dry-run names the teacher and its share of a step's work.
func TestDistillDryRun(t *testing.T) {
	cfg := distillRun(t)
	with, without := EstimateMemory(cfg), EstimateMemory(tinyRun(t))
	if with.Teacher <= 0 || with.Peak-without.Peak < with.Teacher {
		t.Errorf("teacher %d bytes, peak %d with it and %d without", with.Teacher, with.Peak, without.Peak)
	}
	var b strings.Builder
	if err := Summary(&b, cfg); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"distillation teacher (frozen)", "teacher forward", "DeiT (distilled", "dist_token", "head_dist.weight"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("-dry-run output lacks %q:\n%s", want, b.String())
		}
	}
}

// TestTeacherFromTimmStateDict: a timm state_dict teacher (real timm's
// VisionTransformerDistilled) is read from its shapes, its heads from
// distill.teacher_num_heads; without them, or with other classes than the
// student's, it is refused naming a key.
func TestTeacherFromTimmStateDict(t *testing.T) {
	const path = "testdata/deit_timm.safetensors"
	student := deitGoldenConfig()
	dc := DistillConfig{Type: DistillHard, Teacher: path, TeacherNumHeads: 2}
	got, _, err := TeacherConfig(dc, student)
	if err != nil {
		t.Fatal(err)
	}
	if want := deitGoldenConfig().WithDefaults(); got != want {
		t.Errorf("teacher config\n%+v\nwant\n%+v", got, want)
	}
	teacher, err := LoadTeacher(dc, student)
	if err != nil {
		t.Fatal(err)
	}
	if err := teacher.prepare(2, student.ImgSize); err != nil {
		t.Fatal(err)
	}
	defer teacher.Close()
	gold, _ := readDeiTGolden(t)
	x := make([]float32, len(gold.Input))
	for i, v := range gold.Input {
		x[i] = float32(v)
	}
	logits, err := teacher.Logits(x)
	if err != nil {
		t.Fatal(err)
	}
	lf := make([]float64, len(logits))
	for i, v := range logits {
		lf[i] = float64(v)
	}
	if d := maxAbsDiff(lf, gold.Logits); d > 1e-4 {
		t.Errorf("the teacher's logits differ from timm's by %g", d)
	}
	dc.TeacherNumHeads = 0
	var he *checkpoint.HeadsError
	if _, _, err := TeacherConfig(dc, student); !hasKey(err, "distill.teacher") || !errors.As(err, &he) ||
		!strings.Contains(err.Error(), "embed_dim 8 is not a multiple of 64: set distill.teacher_num_heads") {
		t.Errorf("dim 8 without teacher_num_heads: %v", err)
	}
	dc.TeacherNumHeads = 2
	other := student
	other.NumClasses = 10
	if _, _, err := TeacherConfig(dc, other); !hasKey(err, "distill.teacher") {
		t.Errorf("a teacher of 3 classes for 10: %v", err)
	}
}

// TestDistilledWithoutTeacher: with distill.type none a distilled model
// trains on the mean of its two heads (timm's default), so both heads learn;
// a step that asks for a teacher without one is refused.
func TestDistilledWithoutTeacher(t *testing.T) {
	m := tinyModel(t, func(c *layers.Config) { c.Distilled = true; c.ZeroInitHead.Set(true) })
	st, err := NewStep(m, StepConfig{Batch: 4, Optim: optim.DefaultConfig(), LR: func(int) float64 { return 1e-2 }})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rng := rand.New(rand.NewPCG(3, 4))
	x, y := make([]float32, 4*28*28), make([]float32, 4*10)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	for b := 0; b < 4; b++ {
		y[b*10+b] = 1
	}
	if _, err := st.Take(x, y, 0); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"head.weight", "head_dist.weight"} {
		moved := false
		for _, v := range m.Param(name).Value.Data().([]float32) {
			moved = moved || v != 0
		}
		if !moved {
			t.Errorf("%s did not move from zero", name)
		}
	}
	if _, err := NewStep(m, StepConfig{Batch: 4, Optim: optim.DefaultConfig(), Distill: DistillConfig{Type: DistillHard}}); err == nil {
		t.Error("a hard distillation step without a teacher was built")
	}
}

// TestTeacherMatch: a teacher whose file records other classes than the
// student's data set is refused naming distill.teacher, in Match and in a
// run; one trained with another input normalization sees the student's
// images mapped to its own, so its logits are those it gives on images
// normalized its own way.
func TestTeacherMatch(t *testing.T) {
	cfg := distillRun(t)
	digits := []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}
	path := cfg.Distill.Teacher
	m, _, _, err := checkpoint.LoadModel(path, tensor.Float32, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	teacherMean, teacherStd := []float64{0.5}, []float64{0.25}
	meta := checkpoint.ModelMeta{Weights: "raw", Classes: digits, Mean: teacherMean, Std: teacherStd}
	if err := checkpoint.SaveModel(path, m, meta, nil); err != nil {
		t.Fatal(err)
	}
	teacher, err := LoadTeacher(cfg.Distill, cfg.Model)
	if err != nil {
		t.Fatal(err)
	}
	defer teacher.Close()
	fashion := append([]string{"T-shirt/top"}, digits[1:]...)
	var cle *checkpoint.ClassListError
	if err := teacher.Match(fashion, teacherMean, teacherStd); !hasKey(err, "distill.teacher") || !errors.As(err, &cle) {
		t.Errorf("a teacher of other classes: %v, want a *ClassListError under distill.teacher", err)
	}

	studentMean, studentStd := []float64{0.1307}, []float64{0.3081}
	if err := teacher.Match(digits, studentMean, studentStd); err != nil {
		t.Fatal(err)
	}
	if err := teacher.prepare(2, cfg.Model.ImgSize); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	raw := make([]float64, 2*28*28) // pixels in [0, 1]
	student, own := make([]float32, len(raw)), make([]float32, len(raw))
	for i := range raw {
		raw[i] = rng.Float64()
		student[i] = float32((raw[i] - studentMean[0]) / studentStd[0])
		own[i] = float32((raw[i] - teacherMean[0]) / teacherStd[0])
	}
	logits := func(x []float32) []float64 {
		l, err := teacher.Logits(append([]float32(nil), x...))
		if err != nil {
			t.Fatal(err)
		}
		out := make([]float64, len(l))
		for i, v := range l {
			out[i] = float64(v)
		}
		return out
	}
	got := logits(student)
	if err := teacher.Match(digits, teacherMean, teacherStd); err != nil { // its own normalization: no mapping
		t.Fatal(err)
	}
	want, asIs := logits(own), logits(student)
	if d := maxAbsDiff(got, want); d > 1e-4 {
		t.Errorf("re-normalized logits differ from the teacher's on its own normalization by %g", d)
	}
	if d := maxAbsDiff(asIs, want); d < 1e-2 {
		t.Errorf("the normalization makes no difference (%g): the test cannot see the mapping", d)
	}

	// A run refuses the teacher of other classes before training.
	meta.Classes = fashion
	if err := checkpoint.SaveModel(path, m, meta, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), cfg, Options{Log: quietLog()}); !hasKey(err, "distill.teacher") || !errors.As(err, &cle) {
		t.Errorf("a run with a teacher of other classes: %v, want a *ClassListError under distill.teacher", err)
	}
}
