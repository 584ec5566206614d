package train

import (
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/optim"
)

// TestOverfitFixedBatch is the foundation's smoke test: a tiny ViT fits a
// fixed batch of 32 real MNIST digits to 100% training accuracy with plain
// Adam, through the symbolic graph and reverse-mode autodiff.
func TestOverfitFixedBatch(t *testing.T) {
	cfg := tinyRun(t)
	cfg.Model.EmbedDim, cfg.Model.Depth, cfg.Model.NumHeads = 32, 2, 2
	cfg.Model.DropPathRate, cfg.Model.Dropout = 0, 0
	cfg.Data.LimitTrain = 32
	ds, err := data.Open(cfg.Data, data.Train, 1)
	if err != nil {
		t.Fatal(err)
	}
	mean, std := ds.Norm()
	lc := loaderConfig(cfg, false, mean, std) // no augmentation: a fixed batch
	lc.BatchSize = 32
	loader, err := data.NewLoader(ds, lc)
	if err != nil {
		t.Fatal(err)
	}
	it := loader.Epoch(0, 0)
	b, ok, err := it.Next()
	it.Close()
	if err != nil || !ok || b.N != 32 {
		t.Fatalf("batch: ok %v n %v err %v", ok, b, err)
	}
	m, err := layers.New(cfg.Model, tensor.Float32, 1)
	if err != nil {
		t.Fatal(err)
	}
	gr, err := m.Build(32, layers.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	copy(gr.Input.Value().Data().([]float32), b.X)
	tgt := tensor.New(tensor.WithShape(32, 10), tensor.WithBacking(make([]float32, 320)))
	for i, y := range b.Labels {
		tgt.Data().([]float32)[i*10+y] = 1
	}
	targets := G.NewTensor(gr.G, tensor.Float32, 2, G.WithValue(tgt), G.WithName("targets"))
	loss, err := graph.SoftmaxCrossEntropy(gr.Logits, targets)
	if err != nil {
		t.Fatal(err)
	}
	grads, err := G.Grad(loss, gr.Params...)
	if err != nil {
		t.Fatal(err)
	}
	vm := G.NewTapeMachine(gr.G)
	defer vm.Close()
	oc := optim.DefaultConfig()
	oc.WeightDecay = 0 // plain Adam
	opt, err := optim.NewAdamW(oc)
	if err != nil {
		t.Fatal(err)
	}
	params := make([]optim.Param, len(m.Params))
	for i, p := range m.Params {
		params[i] = optim.Param{Name: p.Name, Shape: p.Shape, Value: p.Value.Data().([]float32), NoDecay: p.NoWeightDecay, LayerID: p.LayerID}
	}
	for step := 1; step <= 400; step++ {
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		logits := gr.Logits.Value().Data().([]float32)
		correct := 0
		for i, y := range b.Labels {
			row, pred := logits[i*10:(i+1)*10], 0
			for j := range row {
				if row[j] > row[pred] {
					pred = j
				}
			}
			if pred == y {
				correct++
			}
		}
		if correct == 32 {
			t.Logf("100%% training accuracy after %d steps (loss %v)", step-1, loss.Value())
			return
		}
		for i, g := range grads {
			params[i].Grad = g.Value().Data().([]float32)
		}
		if err := opt.Step(params, 1e-3); err != nil {
			t.Fatal(err)
		}
		vm.Reset()
	}
	t.Fatalf("did not reach 100%% on a fixed batch of 32 in 400 steps (loss %v)", loss.Value())
}
