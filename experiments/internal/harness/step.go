package harness

import (
	"math/rand/v2"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/optim"
	"github.com/vitgo/vit/train"
)

// NewStep builds a float32 model of c initialised with seed, and its
// training step on batch images as train.Run builds it (train.Step, the
// default optimizer config, seed). sc supplies the rest: LR, Arena, Comm, ….
func NewStep(c layers.Config, batch int, seed uint64, sc train.StepConfig) (*train.Step, *layers.VisionTransformer, error) {
	m, err := layers.New(c, tensor.Float32, seed)
	if err != nil {
		return nil, nil, err
	}
	sc.Batch, sc.Seed, sc.Optim = batch, seed, optim.DefaultConfig()
	s, err := train.NewStep(m, sc)
	return s, m, err
}

// RandomBatch is a fixed random batch for timing steps: n images of size
// values, each pixel(rng), then n one-hot targets over classes, drawn from
// rng in that order.
func RandomBatch(rng *rand.Rand, n, size, classes int, pixel func(*rand.Rand) float64) (x, tgt []float32) {
	x = make([]float32, n*size)
	for i := range x {
		x[i] = float32(pixel(rng))
	}
	tgt = make([]float32, n*classes)
	for b := range n {
		tgt[b*classes+rng.IntN(classes)] = 1
	}
	return x, tgt
}
