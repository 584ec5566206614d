package classify

import (
	"path/filepath"
	"testing"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/train"
)

// TestLanesRunFrozenGraphs: every graph of every lane is a Frozen (serving)
// graph: packed Linear weights and the eval attention, no Linear or
// Attention of the ordinary evaluation graph.
func TestLanesRunFrozenGraphs(t *testing.T) {
	cfg := layers.DefaultConfig()
	cfg.ImgSize, cfg.PatchSize, cfg.InChans, cfg.EmbedDim, cfg.Depth, cfg.NumHeads, cfg.NumClasses = layers.Size2{16, 16}, 4, 3, 16, 2, 2, 5
	m, err := layers.New(cfg, tensor.Float32, 1)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.safetensors")
	meta := train.ModelMeta{Dataset: "folder", Mean: []float64{0.5, 0.5, 0.5}, Std: []float64{0.25, 0.25, 0.25}}
	if err := train.SaveModel(path, m, meta, nil); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path, Options{PoolSize: 2, MaxBatch: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for li, l := range c.lanes {
		for _, ev := range l.evals {
			ops := map[string]int{}
			for _, n := range ev.Graph().G.AllNodes() {
				if op := n.Op(); op != nil {
					ops[op.String()]++
				}
			}
			if ops["AttentionEval(h=2)"] != cfg.Depth || ops["Attention(h=2)"] != 0 || ops["Linear"] != 0 || ops["LinearPackedGELU"] != cfg.Depth {
				t.Errorf("lane %d, batch %d: not a Frozen graph (ops %v)", li, ev.Graph().Batch, ops)
			}
		}
	}
}
