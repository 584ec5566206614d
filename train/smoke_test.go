package train

import (
	"testing"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/optim"
)

// TestOverfitFixedBatch is the foundation's smoke test: a tiny ViT fits a
// fixed batch of 32 real MNIST digits to 100% training accuracy with plain
// Adam, through the symbolic graph and reverse-mode autodiff (the training
// step without dropout or drop path computes what the eval graph does).
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
	oc := optim.DefaultConfig()
	oc.WeightDecay.Set(0) // plain Adam
	oc.ClipGrad.Set(0)
	step, err := NewStep(m, StepConfig{Batch: 32, Seed: 1, Optim: oc, LR: func(int) float64 { return 1e-3 }})
	if err != nil {
		t.Fatal(err)
	}
	defer step.Close()
	tgt := make([]float32, 32*10)
	for i, y := range b.Labels {
		tgt[i*10+y] = 1
	}
	var loss float32
	for s := 0; s <= 400; s++ {
		if loss, err = step.Backward(b.X, tgt, s); err != nil {
			t.Fatal(err)
		}
		logits := step.Graph().Logits.Value().Data().([]float32)
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
			t.Logf("100%% training accuracy after %d steps (loss %v)", s, loss)
			return
		}
		if _, err := step.Update(s); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatalf("did not reach 100%% on a fixed batch of 32 in 400 steps (loss %v)", loss)
}
