package train

import (
	"io"
	"testing"

	"github.com/sirupsen/logrus"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/evaluate"
	"github.com/vitgo/vit/layers"
)

// tinyRun is a run small enough for tests: a one-block ViT with 7×7 patches
// on 256 real MNIST training images and 100 validation images (the last
// evaluation batch of 64 is a remainder of 36).
func tinyRun(t *testing.T) Config {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Model = layers.DefaultConfig()
	cfg.Model.ImgSize, cfg.Model.PatchSize, cfg.Model.InChans = layers.Size2{28, 28}, 7, 1
	cfg.Model.EmbedDim, cfg.Model.Depth, cfg.Model.NumHeads, cfg.Model.MLPRatio, cfg.Model.NumClasses = 16, 2, 2, 2, 10
	cfg.Model.DropPathRate, cfg.Model.Dropout = 0.1, 0.1
	cfg.Data.LimitTrain, cfg.Data.LimitVal, cfg.Data.Workers = 256, 100, 2
	cfg.Augment.CropPadding = 2
	cfg.Mixup.MixupAlpha, cfg.Mixup.CutmixAlpha, cfg.Mixup.LabelSmoothing = 0.8, 1.0, 0.1
	cfg.Optim.WarmupEpochs.Set(0.5)
	cfg.Train.Epochs, cfg.Train.BatchSize, cfg.Train.EvalBatchSize = 2, 32, 64
	cfg.Train.OutDir, cfg.Train.LogEvery = t.TempDir(), 1000
	return cfg
}

func tinyModel(t *testing.T, edit func(*layers.Config)) *layers.VisionTransformer {
	t.Helper()
	c := tinyRun(t).Model
	c.ZeroInitHead.Set(false)
	if edit != nil {
		edit(&c)
	}
	m, err := layers.New(c, tensor.Float32, 3)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func quietLog() *logrus.Logger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}

// evalLoader is cfg's validation loading, as cmd/eval passes it.
func evalLoader(cfg Config) *evaluate.Loader {
	l := cfg.WithDefaults().EvalLoader()
	return &l
}
