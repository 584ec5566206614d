package data

import (
	"fmt"
	"log"
)

// Split selects the training or the validation part of a data set.
type Split int

const (
	// Train is the training split: MNIST/Fashion train-*, CIFAR-10
	// data_batch_1..5.bin, folder root/train, csv data.train_csv.
	Train Split = iota
	// Val is the validation split: MNIST/Fashion t10k-* (the 10k test set),
	// CIFAR-10 test_batch.bin, folder root/val, csv data.val_csv.
	Val
)

// String returns "train" or "val".
func (s Split) String() string {
	switch s {
	case Train:
		return "train"
	case Val:
		return "val"
	}
	return fmt.Sprintf("Split(%d)", int(s))
}

// Image is a uint8 image in CHW layout: Pix[c*H*W + y*W + x].
type Image struct {
	C, H, W int
	Pix     []uint8
}

// Dataset is an indexed collection of labelled uint8 images, all with the same
// channel count.
type Dataset interface {
	// Name is the data set's config name (mnist, fashion_mnist, cifar10,
	// folder, csv, or the name given to NewInMemory).
	Name() string
	// Len is the number of images.
	Len() int
	// Classes are the class names; labels index them.
	Classes() []string
	// Channels is the channel count of every image (1 or 3).
	Channels() int
	// Norm is the per-channel normalization the data set defaults to (the
	// config's mean/std when given), each of length Channels().
	Norm() (mean, std []float64)
	// Item returns image i and its label. The image may share memory with
	// the data set: callers must not modify it. Safe for concurrent use.
	Item(i int) (Image, int, error)
}

// HeldDataset is a Dataset whose items hold memory of a decode Budget
// (Folder, classify's files): ItemHeld is Item with a release function that
// the loader calls once it has transformed the image, so that the budget
// bounds the pixels in flight. release must be called exactly once, also
// after an error.
type HeldDataset interface {
	Dataset
	ItemHeld(i int) (img Image, label int, release func(), err error)
}

// Logger receives warnings, e.g. skipped corrupt images. logrus's *Logger
// and *Entry satisfy it.
type Logger interface {
	Warnf(format string, args ...any)
}

type stdLogger struct{}

func (stdLogger) Warnf(format string, args ...any) { log.Printf("data: warning: "+format, args...) }

// Option adjusts Open.
type Option func(*openOptions)

type openOptions struct {
	log Logger
}

// WithLogger sends Open's warnings (skipped corrupt files) to l instead of
// the standard library's log package.
func WithLogger(l Logger) Option {
	return func(o *openOptions) {
		if l != nil {
			o.log = l
		}
	}
}

// Open reads split of the data set cfg names, converting images to inChans
// channels (1: grayscale by ITU-R 601 luma like PIL's "L"; 3: RGB, gray
// replicated), by the reader of its row of Datasets. MNIST, Fashion-MNIST
// and CIFAR-10 are loaded into memory whole; folders and CSV files are
// listed now and decoded lazily by Item. cfg.LimitTrain or cfg.LimitVal
// keeps the first N images of the split.
func Open(cfg Config, split Split, inChans int, opts ...Option) (Dataset, error) {
	o := openOptions{log: stdLogger{}}
	for _, f := range opts {
		f(&o)
	}
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if split != Train && split != Val {
		return nil, fmt.Errorf("data: unknown split %v", split)
	}
	if inChans != 1 && inChans != 3 {
		return nil, fmt.Errorf("data: in_chans must be 1 or 3, got %d", inChans)
	}
	mean, std, err := resolveNorm(cfg, inChans)
	if err != nil {
		return nil, err
	}
	limit := cfg.LimitTrain
	if split == Val {
		limit = cfg.LimitVal
	}
	d, _ := Lookup(cfg.Name) // validated
	ds, err := d.Open(cfg, split, inChans, limit, mean, std, o.log)
	if err != nil {
		return nil, err
	}
	return ds, nil
}

// resolveNorm returns the config's mean/std broadcast to inChans, or the data
// set's defaults.
func resolveNorm(cfg Config, inChans int) (mean, std []float64, err error) {
	if len(cfg.Mean) == 0 {
		m, s := DefaultNorm(cfg.Name, inChans)
		return m, s, nil
	}
	if err := validateNorm("data.mean", "data.std", cfg.Mean, cfg.Std, inChans); err != nil {
		return nil, nil, err
	}
	return broadcast(cfg.Mean, inChans), broadcast(cfg.Std, inChans), nil
}

func broadcast(v []float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		if len(v) == 1 {
			out[i] = v[0]
		} else {
			out[i] = v[i]
		}
	}
	return out
}

// DefaultNorm returns the normalization mean and std (one value per channel)
// of a data set by its config name: MNIST 0.1307/0.3081, Fashion-MNIST
// 0.2860/0.3530 (replicated for 3 channels), CIFAR-10 0.4914,0.4822,0.4465 /
// 0.2470,0.2435,0.2616 (for 1 channel their luma-weighted combination, an
// approximation), folders and CSV files ImageNet's 0.485,0.456,0.406 /
// 0.229,0.224,0.225 or 0.5/0.5 for grayscale: the Mean and Std of its row of
// Datasets. Unknown names get 0.5/0.5.
func DefaultNorm(name DatasetName, inChans int) (mean, std []float64) {
	d, ok := Lookup(name)
	if !ok {
		d = DatasetInfo{Mean: halfNorm, Std: halfNorm}
	}
	return d.Norm(inChans)
}

func luma(v []float64) float64 { return 0.299*v[0] + 0.587*v[1] + 0.114*v[2] }

// limitN applies a limit_train/limit_val value: 0 keeps all n, else at most limit.
func limitN(n, limit int) int {
	if limit > 0 && limit < n {
		return limit
	}
	return n
}
