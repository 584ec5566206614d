package train

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/evaluate"
	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/internal/optional"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/optim"
)

// TestPlannedStepMatchesUnplanned: the training step and evaluator as Run
// builds them (activations planned into one shared arena) give bit for bit
// the loss, gradients and eval logits of graphs whose ops own every output,
// over steps with drop path and dropout on and evaluations run in between;
// and the shared arena is smaller than the unplanned outputs.
func TestPlannedStepMatchesUnplanned(t *testing.T) {
	cfg := layers.Config{ImgSize: layers.Size2{16, 16}, PatchSize: 4, InChans: 1, EmbedDim: 32, Depth: 2, NumHeads: 2,
		MLPRatio: 2, NumClasses: 5, Readout: "cls", DropPathRate: 0.2, Dropout: 0.1, QKVBias: optional.BoolOf(true), ZeroInitHead: optional.BoolOf(false),
		PatchEmbed: "linear", Act: "gelu", LNEps: 1e-6}
	const batch, seed = 6, 3
	newModel := func() *layers.VisionTransformer {
		m, err := layers.New(cfg, tensor.Float32, seed)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}

	// Reference: nothing planned.
	ref := newModel()
	rg, err := ref.Build(batch, layers.BuildOptions{Training: true, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	rtgt := G.NewTensor(rg.G, tensor.Float32, 2, G.WithName("targets"),
		G.WithValue(tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(batch, cfg.NumClasses))))
	rloss, err := graph.SoftmaxCrossEntropy(rg.Logits, rtgt)
	if err != nil {
		t.Fatal(err)
	}
	rgrads, err := G.Grad(rloss, rg.Params...)
	if err != nil {
		t.Fatal(err)
	}
	rvm := G.NewTapeMachine(rg.G)
	defer rvm.Close()
	reg, err := ref.Build(batch, layers.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	revm := G.NewTapeMachine(reg.G)
	defer revm.Close()

	// As Run builds it.
	m := newModel()
	arena := graph.NewArena()
	st, err := NewStep(m, StepConfig{Batch: batch, Seed: seed, Optim: optim.DefaultConfig(), StepsPerEpoch: 1, TotalSteps: 1, Arena: arena})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	step := st.Graph()
	ev, err := evaluate.NewIn(m, batch, arena)
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	if got, unplanned := arena.Bytes(), step.Plan.Bytes; got*2 > unplanned {
		t.Errorf("arena %d bytes for both graphs, want ≤ half the training graph's unplanned %d", got, unplanned)
	}

	var read func(outs ...*G.Node) [][]float32
	run := func(vm G.VM, g *layers.Graph, tgt *G.Node, in, targets []float32, s uint64, outs ...*G.Node) [][]float32 {
		copy(g.Input.Value().Data().([]float32), in)
		if tgt != nil {
			copy(tgt.Value().Data().([]float32), targets)
		}
		g.Stoch.Step = s
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		defer vm.Reset()
		return read(outs...)
	}
	read = func(outs ...*G.Node) [][]float32 {
		var res [][]float32
		for _, n := range outs {
			switch v := n.Value().Data().(type) {
			case float32:
				res = append(res, []float32{v})
			case []float32:
				res = append(res, slices.Clone(v))
			}
		}
		return res
	}
	rng := rand.New(rand.NewPCG(1, 2))
	in := make([]float32, batch*16*16)
	targets := make([]float32, batch*cfg.NumClasses)
	for s := uint64(0); s < 3; s++ {
		for i := range in {
			in[i] = float32(rng.NormFloat64())
		}
		clear(targets)
		for b := range batch {
			targets[b*cfg.NumClasses+rng.IntN(cfg.NumClasses)] = 1
		}
		want := run(rvm, rg, rtgt, in, targets, s, append(G.Nodes{rloss, rg.Logits}, rgrads...)...)
		if _, err := st.Backward(in, targets, int(s)); err != nil {
			t.Fatal(err)
		}
		got := read(append(G.Nodes{step.Loss, step.Logits}, step.Grads...)...)
		for i := range want {
			if !slices.Equal(want[i], got[i]) {
				t.Fatalf("step %d: output %d (loss, logits, then gradients) differs from the unplanned graph", s, i)
			}
		}
		wantLogits := run(revm, reg, nil, in, nil, 0, reg.Logits)[0]
		gotLogits, err := ev.Logits(in, batch)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(wantLogits, gotLogits) {
			t.Fatalf("step %d: eval logits differ from the unplanned graph", s)
		}
	}
}

// TestNoNonFiniteCheckpoint: optim.lr 1e38 (reached after a warmup of one
// step, so that a good checkpoint exists first) makes the second update's
// weights infinite while its loss and gradients are finite. The run stops
// with a *NonFiniteError naming the step, and every tensor of the last
// checkpoint — weights and AdamW moments — is finite: Step checks the
// weights after each update, so none is ever saved non-finite. (EMA is off:
// Step's check of the EMA weights before a save would be a second guard.)
func TestNoNonFiniteCheckpoint(t *testing.T) {
	cfg := tinyRun(t)
	cfg.Optim.LR = 1e38
	cfg.Optim.WarmupEpochs.Set(0.125) // 8 steps per epoch: a warmup of 1 step
	cfg.Checkpoint.EverySteps = 1
	_, err := Run(context.Background(), cfg, Options{Log: quietLog()})
	var nf *NonFiniteError
	if !errors.As(err, &nf) {
		t.Fatalf("error %v, want a *NonFiniteError", err)
	}
	st, err := LoadState(filepath.Join(cfg.Train.OutDir, LastState))
	if err != nil {
		t.Fatal(err)
	}
	if nf.What != "weight" || st.Step > nf.Step || st.Step == 0 {
		t.Fatalf("last checkpoint at step %d, the run stopped at step %d: want a good checkpoint before it (%v)", st.Step, nf.Step, nf)
	}
	t.Logf("stopped: %v; last checkpoint at step %d", nf, st.Step)
	files := map[string]map[string][]float32{"weights": finalWeights(t, cfg.Train.OutDir), "state weights": st.Weights,
		"m": st.M, "v": st.V}
	for what, ts := range files {
		if len(ts) == 0 {
			t.Errorf("%s: none saved", what)
		}
		for name, v := range ts {
			if !allFinite(v) {
				t.Errorf("%s %s: non-finite values in the last checkpoint", what, name)
			}
		}
	}
}

// ExampleStep trains a one-block ViT on one fixed random batch for a few
// steps: Take is Backward (forward and backward) then Update (clip, AdamW,
// EMA, checks).
func ExampleStep() {
	cfg := layers.Config{ImgSize: layers.Size2{8, 8}, PatchSize: 4, InChans: 1, EmbedDim: 16, Depth: 1, NumHeads: 2,
		MLPRatio: 2, NumClasses: 3, Readout: "cls", QKVBias: optional.BoolOf(true), ZeroInitHead: optional.BoolOf(false), PatchEmbed: "linear", Act: "gelu", LNEps: 1e-6}
	m, err := layers.New(cfg, tensor.Float32, 1)
	if err != nil {
		panic(err)
	}
	step, err := NewStep(m, StepConfig{Batch: 4, Optim: optim.DefaultConfig(), LR: func(int) float64 { return 1e-2 }})
	if err != nil {
		panic(err)
	}
	defer step.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, 4*8*8)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	targets := []float32{1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0} // one-hot rows
	var first, last StepStats
	for s := range 20 {
		st, err := step.Take(x, targets, s)
		var nf *NonFiniteError
		if errors.As(err, &nf) {
			fmt.Println("stopped at step", nf.Step)
			return
		}
		if s == 0 {
			first = st
		}
		last = st
	}
	fmt.Printf("loss %.2f, after 20 steps %.2f\n", first.Loss, last.Loss)
	// Output:
	// loss 1.08, after 20 steps 0.03
}

// TestStepUpdateIsClippedAdamW: Step's update is, bit for bit, the building
// blocks in the recipe's order — the gradients of Backward clipped to
// clip_grad, AdamW with weight decay and layer decay at the step's lr, then
// the EMA — computed here on copies of the weights.
func TestStepUpdateIsClippedAdamW(t *testing.T) {
	cfg := layers.Config{ImgSize: layers.Size2{8, 8}, PatchSize: 4, InChans: 1, EmbedDim: 16, Depth: 2, NumHeads: 2,
		MLPRatio: 2, NumClasses: 3, Readout: "cls", QKVBias: optional.BoolOf(true), ZeroInitHead: optional.BoolOf(false), PatchEmbed: "linear", Act: "gelu", LNEps: 1e-6,
		DropPathRate: 0.1, Dropout: 0.1}
	m, err := layers.New(cfg, tensor.Float32, 1)
	if err != nil {
		t.Fatal(err)
	}
	oc := optim.DefaultConfig()
	oc.LayerDecay, oc.EMA, oc.EMADecay = 0.75, true, 0.8
	oc.ClipGrad.Set(0.05)
	oc.WeightDecay.Set(0.1)
	lr := func(s int) float64 { return 1e-3 * float64(s+1) }
	step, err := NewStep(m, StepConfig{Batch: 4, Seed: 3, Optim: oc, LR: lr})
	if err != nil {
		t.Fatal(err)
	}
	defer step.Close()
	ref := make([]optim.Param, len(m.Params))
	for i, p := range m.Params {
		ref[i] = optim.Param{Name: p.Name, Shape: p.Shape, Value: slices.Clone(p.Value.Data().([]float32)), NoDecay: p.NoWeightDecay, LayerID: p.LayerID}
	}
	opt, err := optim.NewAdamW(oc)
	if err != nil {
		t.Fatal(err)
	}
	ema, err := optim.NewEMA(oc.EMADecay, oc.EMAWarmup, ref)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	x, targets := make([]float32, 4*64), make([]float32, 4*3)
	for s := range 4 {
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		clear(targets)
		for b := range 4 {
			targets[b*3+rng.IntN(3)] = 1
		}
		if _, err := step.Backward(x, targets, s); err != nil {
			t.Fatal(err)
		}
		for i, g := range step.Graph().Grads {
			ref[i].Grad = slices.Clone(g.Value().Data().([]float32))
		}
		norm := optim.ClipGradNorm(ref, oc.ClipGrad.Value())
		if err := opt.Step(ref, lr(s)); err != nil {
			t.Fatal(err)
		}
		if err := ema.Update(ref, s+1); err != nil {
			t.Fatal(err)
		}
		st, err := step.Update(s)
		if err != nil {
			t.Fatal(err)
		}
		if st.GradNorm != norm || st.LR != lr(s) || norm <= oc.ClipGrad.Value() {
			t.Fatalf("step %d: reported norm %v lr %v, want %v (above clip_grad %v) and %v", s, st.GradNorm, st.LR, norm, oc.ClipGrad, lr(s))
		}
		for i, p := range step.params {
			if !slices.Equal(p.Value, ref[i].Value) {
				t.Fatalf("step %d: %s differs from clipped AdamW", s, p.Name)
			}
		}
		got, want := step.EMAWeights(), ema.Weights()
		for n, w := range want {
			if !slices.Equal(got[n], w) {
				t.Fatalf("step %d: EMA %s differs", s, n)
			}
		}
	}
}
