package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/sirupsen/logrus"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/train"
)

// budget is how long a training run goes: train.epochs, data.limit_train
// and train.max_steps.
type budget struct {
	epochs, limitTrain, maxSteps int
}

func (b budget) String() string {
	s := fmt.Sprintf("train.epochs=%d, data.limit_train=%d", b.epochs, b.limitTrain)
	if b.maxSteps > 0 {
		s += fmt.Sprintf(", train.max_steps=%d", b.maxSteps)
	}
	return s
}

// trainRun trains the config file (from the repository root) with the
// budget and extra overrides into dir, and returns the final weights' path
// and validation result.
func trainRun(cfgPath, dir string, b budget, limitVal int, seed uint64, extra ...string) (string, train.EvalResult, error) {
	sets := append([]string{
		"train.out_dir=" + dir,
		"train.epochs=" + strconv.Itoa(b.epochs),
		"train.max_steps=" + strconv.Itoa(b.maxSteps),
		"train.seed=" + strconv.FormatUint(seed, 10),
		"data.limit_train=" + strconv.Itoa(b.limitTrain),
		"data.limit_val=" + strconv.Itoa(limitVal),
	}, extra...)
	cfg, err := train.LoadConfig(cfgPath, sets)
	if err != nil {
		return "", train.EvalResult{}, fmt.Errorf("%w (run from the repository root)", err)
	}
	log := logrus.New()
	log.SetOutput(os.Stderr)
	res, err := train.Run(context.Background(), cfg, train.Options{Log: log})
	if err != nil {
		return "", train.EvalResult{}, err
	}
	return filepath.Join(dir, train.LastModel), res.Last, nil
}

// method is how a 28×28 model's position table reaches a larger grid.
type method struct {
	name, short string
	interp      string // bicubic | bilinear | nearest; "" = zero-padded
}

var methods = []method{
	{"bicubic (timm default)", "bicubic", "bicubic"},
	{"bilinear", "bilinear", "bilinear"},
	{"naive: nearest (each position repeated)", "nearest", "nearest"},
	{"naive: zero-padded (7×7 table top-left, zeros elsewhere)", "zero-padded", ""},
}

// loadAt rebuilds a checkpoint's model at img_size size×size with the
// method's position table.
func loadAt(ckpt string, size int, m method) (*layers.VisionTransformer, train.ModelMeta, error) {
	sz := layers.Size2{size, size}
	if m.interp != "" {
		vit, meta, _, err := train.LoadModel(ckpt, tensor.Float32, &sz, m.interp)
		return vit, meta, err
	}
	src, meta, _, err := train.LoadModel(ckpt, tensor.Float32, nil, "")
	if err != nil {
		return nil, meta, err
	}
	vit, err := zeroPadded(src, sz)
	return vit, meta, err
}

// zeroPadded copies src into a model at img_size sz whose position table
// holds src's class-token row and its gh×gw grid in the top-left corner of
// the new grid, zeros elsewhere: what "just use the old table" amounts to.
func zeroPadded(src *layers.VisionTransformer, sz layers.Size2) (*layers.VisionTransformer, error) {
	c := src.Config
	c.ImgSize = sz
	dst, err := layers.New(c, tensor.Float32, 0)
	if err != nil {
		return nil, err
	}
	for _, p := range dst.Params {
		s := src.Param(p.Name).Value.Data().([]float32)
		d := p.Value.Data().([]float32)
		if p.Name != "pos_embed" {
			copy(d, s)
			continue
		}
		dim := c.EmbedDim
		oh, ow := src.Config.Grid()
		nh, nw := c.Grid()
		if nh < oh || nw < ow {
			return nil, fmt.Errorf("zero-padding: grid %dx%d is smaller than the trained %dx%d", nh, nw, oh, ow)
		}
		clear(d)
		copy(d[:dim], s[:dim]) // class token
		for i := 0; i < oh; i++ {
			for j := 0; j < ow; j++ {
				copy(d[(1+i*nw+j)*dim:(2+i*nw+j)*dim], s[(1+i*ow+j)*dim:(2+i*ow+j)*dim])
			}
		}
	}
	return dst, nil
}

// evaluate scores a model on the first limitVal MNIST test images (0 =
// all), resized by the loader to the model's img_size (bilinear) and
// normalized as in training.
func evaluate(m *layers.VisionTransformer, meta train.ModelMeta, limitVal, batch int) (train.EvalResult, error) {
	dc := data.DefaultConfig()
	if meta.Dataset != "" {
		dc.Name = data.DatasetName(meta.Dataset)
	}
	dc.LimitVal = limitVal
	ds, err := data.Open(dc, data.Val, m.Config.InChans)
	if err != nil {
		return train.EvalResult{}, err
	}
	mean, std := meta.Mean, meta.Std
	if len(mean) == 0 {
		mean, std = ds.Norm()
	}
	l, err := data.NewLoader(ds, data.LoaderConfig{
		BatchSize: batch, ImgH: m.Config.ImgSize[0], ImgW: m.Config.ImgSize[1], NumClasses: m.Config.NumClasses,
		Mean: mean, Std: std, Augment: data.DefaultAugmentConfig(), Mixup: data.DefaultMixupConfig(), Prefetch: 4,
	})
	if err != nil {
		return train.EvalResult{}, err
	}
	ev, err := train.NewEvaluator(m, batch)
	if err != nil {
		return train.EvalResult{}, err
	}
	defer ev.Close()
	return ev.Run(l, nil)
}
