package evaluate

import (
	"testing"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/layers"
)

// tinyConfig is a one-block ViT with 7×7 patches on 28×28 grey images.
func tinyConfig() layers.Config {
	c := layers.DefaultConfig()
	c.ImgSize, c.PatchSize, c.InChans = layers.Size2{28, 28}, 7, 1
	c.EmbedDim, c.Depth, c.NumHeads, c.MLPRatio, c.NumClasses = 16, 2, 2, 2, 10
	c.DropPathRate, c.Dropout = 0.1, 0.1
	return c
}

func tinyModel(t *testing.T) *layers.VisionTransformer {
	t.Helper()
	c := tinyConfig()
	c.ZeroInitHead.Set(false)
	m, err := layers.New(c, tensor.Float32, 3)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
