package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/experiments/internal/harness"
	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/train"
)

// vit_ref.py's forward_flops(img, patch, dim, depth, in_chans=…)["total"] for
// TINY, SMALL (28, patch 4) and ViT-S/B/16 (224, patch 16, 3 channels), computed by the
// peer's own function.
func TestForwardFLOPsMatchesPeer(t *testing.T) {
	for _, tc := range []struct {
		cfg  string
		want float64
	}{{"tiny", 22322432}, {"small", 277245696}, {"s16", 9197004288}, {"b16", 35126135808}} {
		if got := forwardFLOPs(benchConfigs[tc.cfg].model()); got != tc.want {
			t.Errorf("%s: forwardFLOPs = %.0f, want %.0f", tc.cfg, got, tc.want)
		}
	}
}

// trainPlan builds c's training graph as measureSteps does and reads its plan.
func trainPlan(t *testing.T, c layers.Config, batch int, prec graph.Precision, rc ...layers.Recompute) floorPlan {
	t.Helper()
	sc := train.StepConfig{LR: func(int) float64 { return 0 }, Precision: prec}
	if len(rc) > 0 {
		sc.Recompute = rc[0]
	}
	step, _, err := harness.NewStep(c, batch, 1, sc)
	if err != nil {
		t.Fatal(err)
	}
	defer step.Close()
	tg := step.Graph()
	p, err := planFromGraph(tg.G, c, batch)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// patchDxFLOPs is the product the training graph no longer runs: the
// patch embedding's input gradient, which nothing reads (the image needs
// no gradient; graph.Prune drops it, as PyTorch never computes it).
func patchDxFLOPs(c layers.Config, batch int) float64 {
	return 2 * float64(batch*c.NumPatches()*c.EmbedDim*c.InChans*c.PatchSize*c.PatchSize)
}

// The products read from the graph are the analytic count: forward =
// batch × forward_flops, each linear layer's dx and dw products cost what
// its forward does (but the patch embedding has no dx), attention backward
// twice its forward, so a step is 3× the forward (the convention of train
// GFLOP/s) less the patch embedding's dx.
func TestPlanMatchesAnalyticFLOPs(t *testing.T) {
	const batch = 2
	for _, run := range []struct {
		name string
		prec graph.Precision
	}{{"tiny", graph.FP32}, {"small", graph.FP32}, {"small", graph.BF16}} {
		c := benchConfigs[run.name].model()
		p := trainPlan(t, c, batch, run.prec)
		name := run.name + "/" + string(run.prec)
		f := p.flops()
		fwd := f[kindLinear] + f[kindAttn]
		if want := batch * forwardFLOPs(c); fwd != want {
			t.Errorf("%s: forward products %.0f FLOPs, want batch × forward_flops = %.0f", name, fwd, want)
		}
		if f[kindLinearDx] != f[kindLinear]-patchDxFLOPs(c, batch) || f[kindLinearDw] != f[kindLinear] {
			t.Errorf("%s: Linear %.0f, LinearDx %.0f, LinearDw %.0f FLOPs; want dw = forward, dx = forward less the patch embedding's", name, f[kindLinear], f[kindLinearDx], f[kindLinearDw])
		}
		if f[kindAttnGrad] != 2.5*f[kindAttn] {
			t.Errorf("%s: AttentionGrad %.0f FLOPs, want 2.5 × Attention %.0f", name, f[kindAttnGrad], f[kindAttn])
		}
		if p.Attn != c.Depth || p.AttnGrad != c.Depth {
			t.Errorf("%s: %d Attention and %d AttentionGrad ops, want %d each", name, p.Attn, p.AttnGrad, c.Depth)
		}
		// patch projection + head + qkv, proj, fc1, fc2 per block, each ×3,
		// but the patch projection's dx.
		if want := 3*(2+4*c.Depth) - 1; len(p.Gemms) != want {
			t.Errorf("%s: %d linear products, want %d", name, len(p.Gemms), want)
		}
	}
}

// A training step that recomputes (train.recompute) issues each
// recomputed Linear's forward product again, and the floor counts it:
// mlp.fc1 per block with mlp; also attn.qkv and attn.proj with block.
func TestPlanCountsRecomputedProducts(t *testing.T) {
	const batch = 2
	c := benchConfigs["small"].model()
	base := trainPlan(t, c, batch, graph.BF16).flops()[kindLinear]
	d, hid, rows := float64(c.EmbedDim), float64(c.Hidden()), float64(batch*c.NumTokens())
	for _, tc := range []struct {
		rc    layers.Recompute
		extra float64 // multiply-adds per row and block
	}{{layers.RecomputeMLP, d * hid}, {layers.RecomputeBlock, d*hid + 3*d*d + d*d}} {
		got := trainPlan(t, c, batch, graph.BF16, tc.rc).flops()[kindLinear]
		if want := base + 2*tc.extra*rows*float64(c.Depth); got != want {
			t.Errorf("recompute %s: Linear %.0f FLOPs, want %.0f (%.0f without and the recomputed products)", tc.rc, got, want, base)
		}
	}
}

// The eval graph issues exactly the training graph's forward products.
func TestEvalPlanIsTrainForward(t *testing.T) {
	const batch = 3
	c := benchConfigs["tiny"].model()
	m, err := layers.New(c, tensor.Float32, 1)
	if err != nil {
		t.Fatal(err)
	}
	eg, err := m.Build(batch, layers.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := planFromGraph(eg.G, c, batch)
	if err != nil {
		t.Fatal(err)
	}
	tp := trainPlan(t, c, batch, graph.FP32)
	var fwd []gemmCall
	for _, g := range tp.Gemms {
		if forwardKind(g.Kind) {
			fwd = append(fwd, g)
		}
	}
	// The same calls; the pruned training graph may order them otherwise.
	if !sameCalls(ep.Gemms, fwd) || ep.Attn != tp.Attn || ep.AttnGrad != 0 {
		t.Errorf("eval plan %v (attn %d, grad %d)\nwant train forward %v (attn %d, grad 0)", ep.Gemms, ep.Attn, ep.AttnGrad, fwd, tp.Attn)
	}
}

// sameCalls reports whether a and b hold the same calls, in any order.
func sameCalls(a, b []gemmCall) bool {
	key := func(cs []gemmCall) []string {
		k := make([]string, len(cs))
		for i, c := range cs {
			k[i] = fmt.Sprint(c)
		}
		slices.Sort(k)
		return k
	}
	return slices.Equal(key(a), key(b))
}

// The floor issues every planned call with valid operands (kernels.Sgemm
// panics on a short slice or a bad leading dimension) and reports each kind.
func TestMeasureFloorSmallBatch(t *testing.T) {
	c := benchConfigs["tiny"].model()
	res, err := measureFloor(c, job{Steps: 1, Batch: 2, Threads: 2, Warmup: 3})
	if err != nil {
		t.Fatal(err)
	}
	if want := 3*(2+4*c.Depth) - 1 + 7*c.Depth*c.NumHeads; res.Calls != want {
		t.Errorf("Calls = %d, want %d", res.Calls, want)
	}
	for _, k := range floorKinds {
		if _, ok := res.Ms[k]; !ok {
			t.Errorf("no time for %s in %v", k, res.Ms)
		}
	}
	if !(res.StepMs > 0 && res.EvalStepMs > 0) {
		t.Errorf("no interleaved step or forward timed: %+v", res)
	}
	// 3× the forward, plus the scores the attention backward recomputes:
	// one (T, T, D/H) product per block, image and head; less the patch
	// embedding's dx.
	tok, hd := float64(c.NumPatches()+1), float64(c.EmbedDim/c.NumHeads)
	recompute := float64(c.Depth*2*c.NumHeads) * 2 * tok * tok * hd
	if got, want := res.TrainFLOPs(), 3*2*forwardFLOPs(c)+recompute-patchDxFLOPs(c, 2); got != want {
		t.Errorf("TrainFLOPs = %.0f, want %.0f", got, want)
	}
}

// A few steps on one fixed batch: the zero-initialised head gives uniform
// logits, so the first loss is ln 10; training on the same batch lowers it.
func TestMeasureStepsLearns(t *testing.T) {
	c := benchConfigs["tiny"].model()
	c.EmbedDim, c.Depth, c.NumHeads = 16, 1, 2
	res, err := measureSteps(c, job{Steps: 6, Batch: 4, Threads: 2, Seed: 3, Warmup: 3})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(res.LossFirst-math.Log(10)) > 1e-5 {
		t.Errorf("first loss %v, want ln 10 = %v", res.LossFirst, math.Log(10))
	}
	if !(res.LossLast < res.LossFirst) {
		t.Errorf("loss went from %v to %v over 9 steps on one batch", res.LossFirst, res.LossLast)
	}
	if res.TrainImgS <= 0 || res.EvalImgS <= 0 || res.Params != layers.CountParams(c) || res.Backend == "" {
		t.Errorf("result %+v", res)
	}
}

func TestParsePeer(t *testing.T) {
	out := "torch 1.13.0a0 threads 2 blas /usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3\n" +
		"img 28 patch 4 dim 64 depth 4 heads 4 | params 205066 | fwd MFLOP/img 22.322 (train ~66.967)\n" +
		`BENCH {"train_img_s": 1001.5, "eval_img_s": 3700.2, "train_gflop_s": 67.07, "eval_gflop_s": 82.6}` + "\n"
	p, err := parsePeer([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	// img/s from the GFLOP/s and the banner's 22.322 MFLOP/img (refine).
	train, eval := 67.07, 82.6
	want := peerResult{TrainImgS: train * 1e9 / (3 * 22.322e6), EvalImgS: eval * 1e9 / (1 * 22.322e6), TrainGFLOPS: 67.07, EvalGFLOPS: 82.6,
		Torch: "torch 1.13.0a0", BLAS: "/usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3"}
	if p != want {
		t.Errorf("parsePeer = %+v, want %+v", p, want)
	}
	// ViT-B/16's 1.0 img/s (rounded to 0.1) and 105.4 GFLOP/s at 35.13
	// GFLOP a forward: the GFLOP/s give 1.00009 img/s; eval 3.1 img/s at
	// 108.9 GFLOP/s gives 3.09991. A GFLOP/s that disagrees (2.0 img/s)
	// leaves the rounded rate.
	for _, tc := range []struct{ img, gf, mult, want float64 }{
		{1.0, 105.4, 3, 105.4e9 / (3 * 35.13e9)}, {3.1, 108.9, 1, 108.9e9 / 35.13e9}, {2.0, 105.4, 3, 2.0}, {1.0, 0, 3, 1.0},
	} {
		r := peerResult{TrainImgS: tc.img, TrainGFLOPS: tc.gf, EvalImgS: tc.img, EvalGFLOPS: tc.gf}
		r.refine(35.13e9)
		got := r.TrainImgS
		if tc.mult == 1 {
			got = r.EvalImgS
		}
		if math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("refine(%v img/s, %v GFLOP/s, ×%v) = %v, want %v", tc.img, tc.gf, tc.mult, got, tc.want)
		}
	}
	// The banner's BLAS: the library, OpenBLAS's core, and the family OpenBLAS
	// chose when vit_ref.py overrode it.
	const lib = "/usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3"
	for _, tc := range []struct{ banner, blas, core, chosen string }{
		{"torch 2.1.0 threads 2 blas " + lib + " (OpenBLAS core SkylakeX)", lib, "SkylakeX", ""},
		{"torch 2.1.0 threads 2 blas " + lib + " (OpenBLAS core Cooperlake; the library chose Prescott for this CPU, overridden) amp bf16", lib, "Cooperlake", "Prescott"},
		{"torch 2.1.0 threads 2 blas " + lib + " (OpenBLAS core Prescott)", lib, "Prescott", ""},
		{"torch 2.1.0 threads 2 blas unknown amp bf16", "unknown", "", ""},
	} {
		p, err := parsePeer([]byte(tc.banner + "\n" + `BENCH {"train_img_s": 1, "eval_img_s": 1}` + "\n"))
		if err != nil {
			t.Fatal(err)
		}
		if p.Torch != "torch 2.1.0" || p.BLAS != tc.blas || p.BLASCore != tc.core || p.BLASChosen != tc.chosen {
			t.Errorf("%q: torch %q, blas %q, core %q, chosen %q; want torch 2.1.0, %q, %q, %q",
				tc.banner, p.Torch, p.BLAS, p.BLASCore, p.BLASChosen, tc.blas, tc.core, tc.chosen)
		}
	}
	for _, bad := range []string{
		"torch 1.13 threads 2 blas x\n",
		`BENCH {"train_img_s": 0, "eval_img_s": 1}` + "\n",
		"BENCH {not json\n",
	} {
		if _, err := parsePeer([]byte(bad)); err == nil {
			t.Errorf("parsePeer(%q): no error", bad)
		}
	}
}

func TestFlagErrorsStopBeforeMeasuring(t *testing.T) {
	for _, args := range [][]string{{"-steps", "-1"}, {"-threads", "-1"}, {"-batch", "-2"}, {"-configs", "x"}, {"extra"}, {"-warmup", "0"}} {
		dir := t.TempDir()
		if err := experiment.Run(append(args, "-dir", dir), io.Discard); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}

// TestReadme: the committed README is the template's rendering of the
// committed results.json.
func TestReadme(t *testing.T) { experiment.TestReadme(t, ".") }

// Each config runs its own batch and steps unless the flags set them.
func TestPerConfigBatchAndSteps(t *testing.T) {
	o := opts{configs: "tiny,s16", rounds: 1, threads: 2, warmup: 1}
	cs, err := o.check()
	if err != nil {
		t.Fatal(err)
	}
	if cs[0].Batch != 128 || cs[1].Batch != 32 || cs[1].Steps != 5 {
		t.Errorf("defaults: %+v", cs)
	}
	if uniform(cs, func(b benchConfig) int { return b.Batch }) != 0 || uniform(cs[:1], func(b benchConfig) int { return b.Batch }) != 128 {
		t.Error("uniform: want 0 for differing batches, 128 for tiny alone")
	}
	if m := cs[1].model(); m.InChans != 3 || m.ImgSize[0] != 224 || m.NumPatches()+1 != 197 {
		t.Errorf("s16 model %+v", m)
	}
	o.configs, o.batch, o.steps = "b16-384", 4, 1
	if cs, err = o.check(); err != nil || cs[0].Batch != 4 || cs[0].Steps != 1 {
		t.Errorf("overrides: %+v, %v", cs, err)
	}
	if got := strings.Join(peerArgs("p.py", benchConfigs["b16"], 16, 2, 3, graph.FP32), " "); !strings.Contains(got, "--img 224 --patch 16 --in-chans 3") {
		t.Errorf("peer args %q", got)
	}
	if got := benchConfigs["s16"].label(); got != "S16 (d384 L12 h6, 3×224², batch 32)" {
		t.Errorf("label %q", got)
	}
}
