package train

// Recipe tests: each pins one piece of the training recipe at the level of
// the training loop (train.Run) or the model, so that removing or bypassing
// its wiring fails a test, not only a unit test of the building block.
// Expected values are computed here independently of the code under test
// (closed-form schedules, timm's parameter-group rules), or from the
// building block itself where the wiring is what is tested (posembed).

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/checkpoint"
	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/layers/posembed"
	"github.com/vitgo/vit/optim"
	"github.com/vitgo/vit/report"
)

// runRecipe runs cfg with hook (may be nil) seeing every step.
func runRecipe(t *testing.T, cfg Config, hook func(r *run, b *data.Batch, s StepStats)) {
	t.Helper()
	if _, err := Run(context.Background(), cfg, Options{Log: quietLog(), onStep: hook}); err != nil {
		t.Fatal(err)
	}
}

// initialWeights are the weights layers.New gives cfg's model, as Run
// starts them (no init_from).
func initialWeights(t *testing.T, cfg Config) map[string][]float32 {
	t.Helper()
	m, err := layers.New(cfg.Model, tensor.Float32, cfg.Train.Seed)
	if err != nil {
		t.Fatal(err)
	}
	w := map[string][]float32{}
	for _, p := range m.Params {
		w[p.Name] = slices.Clone(p.Value.Data().([]float32))
	}
	return w
}

// firstLoss runs one step of cfg and returns its loss from steps.csv.
func firstLoss(t *testing.T, cfg Config) float64 {
	t.Helper()
	cfg.Train.OutDir, cfg.Train.MaxSteps, cfg.Train.LogEvery = t.TempDir(), 1, 1
	runRecipe(t, cfg, nil)
	rows, err := report.ReadSteps(filepath.Join(cfg.Train.OutDir, report.StepsFile))
	if err != nil || len(rows) != 1 {
		t.Fatalf("steps.csv: %v rows, %v", len(rows), err)
	}
	return rows[0].Loss
}

// TestRecipeClipping: with optim.clip_grad far below the gradients' norm,
// the gradients the update reads have exactly the clipped global norm,
// min(norm, clip_grad), at every step.
func TestRecipeClipping(t *testing.T) {
	const clip = 0.05
	cfg := tinyRun(t)
	cfg.Train.MaxSteps = 4
	cfg.Optim.ClipGrad.Set(clip)
	clipped := 0
	runRecipe(t, cfg, func(r *run, _ *data.Batch, s StepStats) {
		var sum float64
		for _, p := range r.step.params {
			for _, g := range p.Grad {
				sum += float64(g) * float64(g)
			}
		}
		got, want := math.Sqrt(sum), math.Min(s.GradNorm, clip)
		if math.Abs(got-want) > 1e-4*want {
			t.Errorf("step %d: the update read gradients of norm %v, want min(%v, clip_grad %v)", r.st.Step, got, s.GradNorm, clip)
		}
		if s.GradNorm > clip {
			clipped++
		}
	})
	if clipped == 0 {
		t.Fatal("no step had a norm above clip_grad: the test shows nothing")
	}
}

// TestRecipeScheduleAndWarmup recovers the learning rate each update really
// applied (from the bias weights before and after it and the AdamW moments)
// and compares it, and steps.csv's lr, with timm's schedule written out
// here: linear warmup from warmup_lr over warmup_epochs, then cosine to
// min_lr. A constant lr, a missing warmup or a missing cosine all fail.
func TestRecipeScheduleAndWarmup(t *testing.T) {
	cfg := tinyRun(t)
	cfg.Optim.LR = 2e-3
	cfg.Optim.WarmupLR.Set(1e-5)
	cfg.Optim.MinLR.Set(1e-4)
	cfg.Optim.WarmupEpochs.Set(0.5)
	cfg.Train.LogEvery = 1
	cfg.Optim.ClipGrad.Set(0)
	const spe, total, warm = 8, 16, 4 // 256 images / 32; 2 epochs; 0.5 epochs
	o := cfg.Optim
	warmLR, minLR := o.WarmupLR.Value(), o.MinLR.Value()
	want := func(t int) float64 {
		if t < warm {
			return warmLR + (o.LR-warmLR)*float64(t)/warm
		}
		return minLR + 0.5*(o.LR-minLR)*(1+math.Cos(math.Pi*float64(t-warm)/float64(total-warm)))
	}
	prev := initialWeights(t, cfg)
	b1, b2 := o.Betas[0], o.Betas[1]
	runRecipe(t, cfg, func(r *run, _ *data.Batch, s StepStats) {
		step := r.st.Step - 1
		_, m, v := r.step.opt.(*optim.AdamW).State()
		bc1, bc2 := 1-math.Pow(b1, float64(step+1)), math.Sqrt(1-math.Pow(b2, float64(step+1)))
		var lrs []float64
		for _, p := range r.step.params {
			if !strings.HasSuffix(p.Name, ".bias") { // no weight decay
				continue
			}
			for i, w := range p.Value {
				d := float64(w) - float64(prev[p.Name][i])
				if mi := float64(m[p.Name][i]); math.Abs(d) > 0.3*want(step) {
					denom := math.Sqrt(float64(v[p.Name][i]))/bc2 + o.Eps
					lrs = append(lrs, -d*bc1*denom/mi)
				}
			}
			prev[p.Name] = slices.Clone(p.Value)
		}
		if len(lrs) < 10 {
			t.Fatalf("step %d: only %d usable bias updates", step, len(lrs))
		}
		sort.Float64s(lrs)
		applied := lrs[len(lrs)/2]
		if math.Abs(applied-want(step)) > 2e-3*want(step) {
			t.Errorf("step %d: applied lr %.6g, the schedule says %.6g", step, applied, want(step))
		}
		if math.Abs(s.LR-want(step)) > 1e-12 {
			t.Errorf("step %d: reported lr %.6g, the schedule says %.6g", step, s.LR, want(step))
		}
	})
	rows, err := report.ReadSteps(filepath.Join(cfg.Train.OutDir, report.StepsFile))
	if err != nil || len(rows) != total {
		t.Fatalf("steps.csv: %d rows, %v", len(rows), err)
	}
	for _, row := range rows {
		if math.Abs(row.LR-want(row.Step-1)) > 1e-12 {
			t.Errorf("steps.csv step %d: lr %v, want %v", row.Step, row.LR, want(row.Step-1))
		}
	}
}

// TestRunFeedsTheConfiguredData: the batches every step trains on are, bit
// for bit, those of a loader made here from the config's augment and mixup
// sections (Mixup, CutMix and label smoothing at values that are nobody's
// defaults), and the step's graph holds exactly them; the targets show
// mixing and smoothing.
func TestRunFeedsTheConfiguredData(t *testing.T) {
	cfg := tinyRun(t)
	cfg.Mixup.MixupAlpha, cfg.Mixup.CutmixAlpha, cfg.Mixup.LabelSmoothing = 0.6, 0.9, 0.2
	cfg.Augment.CropPadding = 3
	cfg.Train.MaxSteps = 6
	ds, err := data.Open(cfg.Data, data.Train, 1)
	if err != nil {
		t.Fatal(err)
	}
	mean, std := ds.Norm()
	ref, err := data.NewLoader(ds, data.LoaderConfig{BatchSize: cfg.Train.BatchSize, ImgH: 28, ImgW: 28, Train: true,
		Seed: cfg.Train.Seed, Workers: 1, Augment: cfg.Augment, Mixup: cfg.Mixup, NumClasses: 10, Mean: mean, Std: std})
	if err != nil {
		t.Fatal(err)
	}
	it := ref.Epoch(0, 0)
	defer it.Close()
	mixed := 0
	smallest := 1.0
	runRecipe(t, cfg, func(r *run, b *data.Batch, _ StepStats) {
		want, ok, err := it.Next()
		if err != nil || !ok {
			t.Fatalf("reference loader: %v %v", ok, err)
		}
		if !slices.Equal(b.X, want.X) || !slices.Equal(b.Targets, want.Targets) {
			t.Fatalf("step %d: the batch differs from the configured loader's", r.st.Step)
		}
		g := r.step.Graph()
		if !slices.Equal(g.Input.Value().Data().([]float32), want.X) || !slices.Equal(g.Targets.Value().Data().([]float32), want.Targets) {
			t.Fatalf("step %d: the step's graph holds another batch", r.st.Step)
		}
		for i := range b.N {
			row := b.Targets[i*10 : (i+1)*10]
			if slices.Max(row) < 1-0.2+0.02-1e-6 {
				mixed++
			}
			smallest = math.Min(smallest, float64(slices.Min(row)))
		}
	})
	if mixed == 0 || smallest <= 0 {
		t.Fatalf("%d mixed target rows, smallest target %v: want mixing and smoothing", mixed, smallest)
	}
}

// TestRecipeZeroInitHead: model.zero_init_head starts head.weight and
// head.bias at zero, so the first step's logits are all zero and its loss
// is exactly ln(classes) whatever the (soft) targets; without it the loss
// differs.
func TestRecipeZeroInitHead(t *testing.T) {
	cfg := tinyRun(t)
	cfg.Model.ZeroInitHead.Set(true)
	w := initialWeights(t, cfg)
	for _, n := range []string{"head.weight", "head.bias"} {
		if slices.ContainsFunc(w[n], func(v float32) bool { return v != 0 }) {
			t.Errorf("%s is not zero at init", n)
		}
	}
	if l := firstLoss(t, cfg); math.Abs(l-math.Log(10)) > 1e-5 {
		t.Errorf("zero head: first loss %v, want ln 10 = %v", l, math.Log(10))
	}
	cfg.Model.ZeroInitHead.Set(false)
	if l := firstLoss(t, cfg); math.Abs(l-math.Log(10)) < 1e-4 {
		t.Errorf("random head: first loss %v is ln 10", l)
	}
}

// TestRecipeStochasticLayers: model.drop_path_rate and model.dropout each
// change the training forward (the first step's loss, same weights and
// batch), so the rates reach the training graph.
func TestRecipeStochasticLayers(t *testing.T) {
	cfg := tinyRun(t)
	cfg.Model.ZeroInitHead.Set(false) // a zero head makes every loss ln 10
	cfg.Model.DropPathRate, cfg.Model.Dropout = 0, 0
	base := firstLoss(t, cfg)
	for _, tc := range []struct {
		key            string
		dropPath, drop float64
	}{{"drop_path_rate", 0.5, 0}, {"dropout", 0, 0.5}} {
		c := cfg
		c.Model.DropPathRate, c.Model.Dropout = tc.dropPath, tc.drop
		if l := firstLoss(t, c); l == base {
			t.Errorf("model.%s 0.5: first loss %v, the same as without", tc.key, l)
		}
	}
}

// noDecay is timm's rule for the ViT, written out here: every tensor of at
// most one dimension, every bias, pos_embed and cls_token.
func noDecay(name string, shape []int) bool {
	return len(shape) <= 1 || strings.HasSuffix(name, ".bias") || name == "pos_embed" || name == "cls_token"
}

// firstUpdate runs one step of cfg and returns the weights after it, with
// the shapes of the model's parameters.
func firstUpdate(t *testing.T, cfg Config) (map[string][]float32, map[string][]int) {
	t.Helper()
	cfg.Train.OutDir, cfg.Train.MaxSteps = t.TempDir(), 1
	runRecipe(t, cfg, nil)
	m, err := layers.New(cfg.Model, tensor.Float32, 0)
	if err != nil {
		t.Fatal(err)
	}
	shapes := map[string][]int{}
	for _, p := range m.Params {
		shapes[p.Name] = p.Shape
	}
	return finalWeights(t, cfg.Train.OutDir), shapes
}

// TestRecipeWeightDecayGroups: one step with optim.weight_decay 0.3 against
// one with 0: the tensors timm exempts from decay come out bit for bit the
// same, every other tensor differs.
func TestRecipeWeightDecayGroups(t *testing.T) {
	cfg := tinyRun(t)
	cfg.Model.ZeroInitHead.Set(false) // a zero head.weight would not show its decay
	cfg.Optim.LR = 1e-2
	cfg.Optim.WarmupEpochs.Set(0)
	cfg.Optim.WeightDecay.Set(0)
	plain, shapes := firstUpdate(t, cfg)
	cfg.Optim.WeightDecay.Set(0.3)
	decayed, _ := firstUpdate(t, cfg)
	var exempt []string
	for name, s := range shapes {
		same := slices.Equal(plain[name], decayed[name])
		if noDecay(name, s) {
			exempt = append(exempt, name)
			if !same {
				t.Errorf("%s %v: decayed, but timm exempts it", name, s)
			}
		} else if same {
			t.Errorf("%s %v: not decayed", name, s)
		}
	}
	if len(exempt) == 0 || len(exempt) == len(shapes) {
		t.Fatalf("%d of %d tensors exempt", len(exempt), len(shapes))
	}
}

// layerID is timm's layer id for the ViT (VisionTransformer.group_matcher
// through param_groups_layer_decay), written out here: the embeddings are
// layer 0, blocks.i is i+1, the final norm joins the last block (its
// MATCH_PREV_GROUP ordinal), and the head, matched by nothing, is depth+1.
func layerID(name string, depth int) int {
	switch {
	case strings.HasPrefix(name, "patch_embed.") || name == "cls_token" || name == "pos_embed":
		return 0
	case strings.HasPrefix(name, "blocks."):
		i, err := strconv.Atoi(strings.Split(name, ".")[1])
		if err != nil {
			panic(name)
		}
		return i + 1
	case strings.HasPrefix(name, "norm."):
		return depth
	}
	return depth + 1
}

// TestRecipeLayerDecay: the first AdamW update moves each weight by about
// lr·scale whatever its gradient, so the update with optim.layer_decay 0.5
// divided by the one without is, per tensor, 0.5^(depth+1−layer id).
func TestRecipeLayerDecay(t *testing.T) {
	cfg := tinyRun(t)
	cfg.Model.ZeroInitHead.Set(false)
	cfg.Optim.LR = 1e-3
	cfg.Optim.WarmupEpochs.Set(0)
	cfg.Optim.WeightDecay.Set(0)
	w0 := initialWeights(t, cfg)
	plain, shapes := firstUpdate(t, cfg)
	cfg.Optim.LayerDecay = 0.5
	decayed, _ := firstUpdate(t, cfg)
	depth := cfg.Model.Depth
	for name := range shapes {
		var ratios []float64
		for i := range w0[name] {
			dp := float64(plain[name][i]) - float64(w0[name][i])
			if math.Abs(dp) > 0.5*cfg.Optim.LR {
				ratios = append(ratios, (float64(decayed[name][i])-float64(w0[name][i]))/dp)
			}
		}
		if len(ratios) == 0 {
			t.Errorf("%s: no weight moved", name)
			continue
		}
		sort.Float64s(ratios)
		got, want := ratios[len(ratios)/2], math.Pow(0.5, float64(depth+1-layerID(name, depth)))
		if math.Abs(got-want) > 1e-3*want {
			t.Errorf("%s: update scaled by %.4g, want 0.5^%d = %.4g", name, got, depth+1-layerID(name, depth), want)
		}
	}
}

// TestRecipeEMA: with optim.ema the EMA weights follow, after every step n,
// e ← d·e + (1−d)·w with d = optim.ema_decay (no warmup) and the first
// update a copy, and last_ema.safetensors holds the final EMA.
func TestRecipeEMA(t *testing.T) {
	cfg := tinyRun(t)
	cfg.Optim.EMA, cfg.Optim.EMADecay, cfg.Optim.EMAWarmup = true, 0.9, false
	cfg.Train.MaxSteps = 5
	ema := map[string][]float64{}
	var last map[string][]float32
	runRecipe(t, cfg, func(r *run, _ *data.Batch, _ StepStats) {
		d := cfg.Optim.EMADecay
		if r.st.Step == 1 {
			d = 0
		}
		got := r.step.EMAWeights()
		for _, p := range r.step.params {
			e := ema[p.Name]
			if e == nil {
				e = make([]float64, len(p.Value))
				ema[p.Name] = e
			}
			for i, w := range p.Value {
				e[i] = d*e[i] + (1-d)*float64(w)
				if g := float64(got[p.Name][i]); math.Abs(g-e[i]) > 1e-6+1e-5*math.Abs(e[i]) {
					t.Fatalf("step %d: EMA %s[%d] = %v, want %v", r.st.Step, p.Name, i, g, e[i])
				}
			}
		}
		last = got
	})
	f, err := modelWeights(filepath.Join(cfg.Train.OutDir, LastEMAModel))
	if err != nil {
		t.Fatal(err)
	}
	sameWeights(t, last, f)
}

// modelWeights reads the tensors of a model file.
func modelWeights(path string) (map[string][]float32, error) {
	f, _, _, err := checkpoint.ReadModel(path)
	if err != nil {
		return nil, err
	}
	out := map[string][]float32{}
	for _, ts := range f.Tensors {
		v, err := ts.Float32()
		if err != nil {
			return nil, err
		}
		out[ts.Name] = v
	}
	return out, nil
}

// TestRecipeFinetune: finetune.init_from a 4×4-grid checkpoint into a
// model of twice the image size starts training from the file's weights
// with pos_embed resampled to 8×8 (by finetune.interp: the building
// block's result for bicubic and bilinear),
// and finetune.reset_head starts the head at zero instead of the file's. A
// learning rate of 1e-12 keeps the weights after the one step within 1e-9
// of where they started.
func TestRecipeFinetune(t *testing.T) {
	srcCfg := tinyRun(t)
	srcCfg.Model.ZeroInitHead.Set(false)
	src, err := layers.New(srcCfg.Model, tensor.Float32, 7)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "src.safetensors")
	classes := []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}
	if err := checkpoint.SaveModel(path, src, checkpoint.ModelMeta{Dataset: "mnist", Mean: []float64{0.1307}, Std: []float64{0.3081}, Classes: classes, Weights: "raw"}, nil); err != nil {
		t.Fatal(err)
	}
	srcW, err := modelWeights(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		interp posembed.Mode
		reset  bool
	}{{posembed.Bicubic, false}, {posembed.Bilinear, true}} {
		t.Run(fmt.Sprintf("%v,reset_head=%v", tc.interp, tc.reset), func(t *testing.T) {
			pos, err := posembed.Resample(srcW["pos_embed"], srcCfg.Model.EmbedDim, 1, 4, 4, 8, 8, posembed.Options{Mode: tc.interp})
			if err != nil {
				t.Fatal(err)
			}
			cfg := tinyRun(t)
			cfg.Model.ImgSize = layers.Size2{56, 56}
			cfg.Finetune.InitFrom, cfg.Finetune.ResetHead, cfg.Finetune.Interp = path, tc.reset, Interp(tc.interp.String())
			cfg.Optim.LR = 1e-12
			cfg.Optim.MinLR.Set(1e-13)
			cfg.Optim.WarmupEpochs.Set(0)
			cfg.Optim.WeightDecay.Set(0)
			got, _ := firstUpdate(t, cfg)
			for name, v := range got {
				want := srcW[name]
				switch {
				case name == "pos_embed":
					want = pos
				case tc.reset && strings.HasPrefix(name, "head."):
					want = make([]float32, len(v))
				}
				if len(want) != len(v) {
					t.Fatalf("%s: %d values, want %d", name, len(v), len(want))
				}
				for i := range v {
					if math.Abs(float64(v[i])-float64(want[i])) > 1e-9 {
						t.Fatalf("%s[%d] = %v, want %v (from %s)", name, i, v[i], want[i], path)
					}
				}
			}
		})
	}
}
