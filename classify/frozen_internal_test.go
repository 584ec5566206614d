package classify

import (
	"context"
	"image"
	"image/color"
	"path/filepath"
	"testing"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/checkpoint"
	"github.com/vitgo/vit/internal/optional"
	"github.com/vitgo/vit/layers"
)

// TestLanesRunFrozenGraphs: every graph of every lane is a Frozen (serving)
// graph: packed Linear weights and the eval attention, no Linear or
// Attention of the ordinary evaluation graph.
func TestLanesRunFrozenGraphs(t *testing.T) {
	c, cfg := smallClassifier(t, Options{PoolSize: 2, MaxBatch: 4})
	cfg.ImgSize, cfg.PatchSize, cfg.InChans, cfg.EmbedDim, cfg.Depth, cfg.NumHeads, cfg.NumClasses = layers.Size2{16, 16}, 4, 3, 16, 2, 2, 5
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

// smallClassifier loads a random 5-class model on 16×16 RGB images.
func smallClassifier(t *testing.T, o Options) (*Classifier, layers.Config) {
	t.Helper()
	cfg := layers.DefaultConfig()
	cfg.ImgSize, cfg.PatchSize, cfg.InChans, cfg.EmbedDim, cfg.Depth, cfg.NumHeads, cfg.NumClasses = layers.Size2{16, 16}, 4, 3, 16, 2, 2, 5
	cfg.ZeroInitHead = optional.BoolOf(false)
	m, err := layers.New(cfg, tensor.Float32, 1)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.safetensors")
	meta := checkpoint.ModelMeta{Dataset: "folder", Mean: []float64{0.5, 0.5, 0.5}, Std: []float64{0.25, 0.25, 0.25}}
	if err := checkpoint.SaveModel(path, m, meta, nil); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path, Options{PoolSize: o.PoolSize, MaxBatch: o.MaxBatch, TopK: 5, Precision: o.Precision})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, cfg
}

// TestRunBatchFillsGraphsExactly: 7 images gathered on a lane with graphs
// of 1, 2, 4 and 8 run as 4 + 2 + 1 (no padded image computed), and each
// gets its answer alone.
func TestRunBatchFillsGraphsExactly(t *testing.T) {
	c, _ := smallClassifier(t, Options{PoolSize: 1, MaxBatch: 8})
	const n = 7
	req := &request{ctx: context.Background(), out: make([][]Prediction, n), done: make(chan struct{})}
	req.left.Store(n)
	l := c.lanes[0] // its serve goroutine is idle: nothing is queued
	l.batch = l.batch[:0]
	var imgs []image.Image
	for i := 0; i < n; i++ {
		img := image.NewRGBA(image.Rect(0, 0, 16, 16))
		for p := 0; p < 256; p++ {
			img.Set(p%16, p/16, color.RGBA{uint8(p * (i + 3)), uint8(p * 5), uint8(40 * i), 0xff})
		}
		imgs = append(imgs, img)
		x := make([]float32, 3*16*16)
		if err := c.preprocess(x, img); err != nil {
			t.Fatal(err)
		}
		l.batch = append(l.batch, &item{x: x, i: i, req: req})
	}
	c.runBatch(l)
	<-req.done
	if s := c.Stats(); s.Batches != 3 || s.Images != n || s.MaxBatch != 4 {
		t.Errorf("stats %+v: want 7 images in 3 graph runs (4 + 2 + 1)", s)
	}
	for i, img := range imgs {
		alone, err := c.Classify(context.Background(), []image.Image{img})
		if err != nil {
			t.Fatal(err)
		}
		if !samePredictions(req.out[i], alone[0]) {
			t.Errorf("image %d: %v in the batch, %v alone", i, req.out[i], alone[0])
		}
	}
}
