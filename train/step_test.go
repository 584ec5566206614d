package train

import (
	"math/rand/v2"
	"slices"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/layers"
)

// TestPlannedStepMatchesUnplanned: the training step and evaluator as Run
// builds them (activations planned into one shared arena) give bit for bit
// the loss, gradients and eval logits of graphs whose ops own every output,
// over steps with drop path and dropout on and evaluations run in between;
// and the shared arena is smaller than the unplanned outputs.
func TestPlannedStepMatchesUnplanned(t *testing.T) {
	cfg := layers.Config{ImgSize: layers.Size2{16, 16}, PatchSize: 4, InChans: 1, EmbedDim: 32, Depth: 2, NumHeads: 2,
		MLPRatio: 2, NumClasses: 5, Readout: "cls", DropPathRate: 0.2, Dropout: 0.1, QKVBias: true,
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
	step, err := BuildTrainGraph(m, batch, seed, arena)
	if err != nil {
		t.Fatal(err)
	}
	defer step.Close()
	ev, err := NewEvaluatorIn(m, batch, arena)
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	if got, unplanned := arena.Bytes(), step.Plan.Bytes; got*2 > unplanned {
		t.Errorf("arena %d bytes for both graphs, want ≤ half the training graph's unplanned %d", got, unplanned)
	}

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
		got := run(step.VM, step.Graph, step.Targets, in, targets, s, append(G.Nodes{step.Loss, step.Logits}, step.Grads...)...)
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
