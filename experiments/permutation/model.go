package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"github.com/sirupsen/logrus"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/train"
)

// trainBriefly trains the default MNIST recipe (configs/mnist_vit_tiny.yaml)
// on a budget into dir and returns the final checkpoint and its top-1 on the
// validation images it was evaluated on.
func trainBriefly(dir string, epochs, limitTrain, maxSteps, limitVal int, seed uint64) (string, float64, error) {
	src, err := os.ReadFile("configs/mnist_vit_tiny.yaml")
	if err != nil {
		return "", 0, fmt.Errorf("run from the repository root: %w", err)
	}
	sets := []string{
		"train.out_dir=" + dir,
		"train.epochs=" + strconv.Itoa(epochs),
		"train.max_steps=" + strconv.Itoa(maxSteps),
		"train.seed=" + strconv.FormatUint(seed, 10),
		"data.limit_train=" + strconv.Itoa(limitTrain),
		"data.limit_val=" + strconv.Itoa(limitVal),
	}
	cfg, err := train.ParseConfig(src, sets)
	if err != nil {
		return "", 0, fmt.Errorf("configs/mnist_vit_tiny.yaml: %w", err)
	}
	log := logrus.New()
	log.SetOutput(os.Stderr)
	res, err := train.Run(context.Background(), cfg, train.Options{Log: log})
	if err != nil {
		return "", 0, err
	}
	return filepath.Join(dir, train.LastModel), res.Last.Top1, nil
}

// loadFloat64 rebuilds a checkpoint's model in float64 (the weights are
// stored float32; LoadWeights widens them).
func loadFloat64(path string) (*layers.VisionTransformer, train.ModelMeta, error) {
	f, meta, ours, err := train.ReadModel(path)
	if err != nil {
		return nil, meta, err
	}
	if !ours {
		return nil, meta, fmt.Errorf("%s: no model metadata of ours", path)
	}
	m, err := layers.New(meta.Model, tensor.Float64, 0)
	if err != nil {
		return nil, meta, fmt.Errorf("%s: %w", path, err)
	}
	if _, err := train.LoadWeights(m, f, train.LoadOptions{}); err != nil {
		return nil, meta, fmt.Errorf("%s: %w", path, err)
	}
	return m, meta, nil
}

// narrow copies a float64 model into float32.
func narrow(m *layers.VisionTransformer) (*layers.VisionTransformer, error) {
	out, err := layers.New(m.Config, tensor.Float32, 0)
	if err != nil {
		return nil, err
	}
	for i, p := range m.Params {
		src := p.Value.Data().([]float64)
		dst := out.Params[i].Value.Data().([]float32)
		for j, v := range src {
			dst[j] = float32(v)
		}
	}
	return out, nil
}

// zeroPos sets the whole position table (class-token row included) to 0.
func zeroPos(m *layers.VisionTransformer) { layers.InitConst(m.Param("pos_embed").Value, 0) }

// testImages returns the first n MNIST test images, normalized with mean
// and std (nil: the data set's own), as (n, 1, 28, 28) float64, and their
// labels.
func testImages(n int, mean, std []float64) ([]float64, []int, error) {
	dc := data.DefaultConfig()
	dc.LimitVal = n
	ds, err := data.Open(dc, data.Val, 1)
	if err != nil {
		return nil, nil, err
	}
	if len(mean) == 0 {
		mean, std = ds.Norm()
	}
	l, err := data.NewLoader(ds, data.LoaderConfig{BatchSize: n, ImgH: 28, ImgW: 28, NumClasses: 10, Mean: mean, Std: std, Workers: 1,
		Augment: data.DefaultAugmentConfig(), Mixup: data.DefaultMixupConfig()})
	if err != nil {
		return nil, nil, err
	}
	it := l.Epoch(0, 0)
	defer it.Close()
	b, ok, err := it.Next()
	if err != nil {
		return nil, nil, err
	}
	if !ok || b.N != n {
		return nil, nil, fmt.Errorf("wanted %d test images", n)
	}
	x := make([]float64, len(b.X))
	for i, v := range b.X {
		x[i] = float64(v)
	}
	return x, append([]int(nil), b.Labels...), nil
}

// permutation is a random order of the g patch positions: the permuted
// image's patch j is the original's patch perm[j].
func permutation(g int, rng *rand.Rand) []int { return rng.Perm(g) }

// permutePatches moves the P×P patches of n images (n, C, H, W) so that
// patch j (row-major on the grid) of the result is patch perm[j] of x.
func permutePatches(x []float64, n, c, h, w, p int, perm []int) []float64 {
	out := make([]float64, len(x))
	gw := w / p
	for i := 0; i < n*c; i++ {
		img, dst := x[i*h*w:(i+1)*h*w], out[i*h*w:(i+1)*h*w]
		for j, src := range perm {
			jy, jx := j/gw*p, j%gw*p
			sy, sx := src/gw*p, src%gw*p
			for y := 0; y < p; y++ {
				copy(dst[(jy+y)*w+jx:(jy+y)*w+jx+p], img[(sy+y)*w+sx:(sy+y)*w+sx+p])
			}
		}
	}
	return out
}
