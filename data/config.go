package data

import (
	"fmt"
	"math"
)

// Data set names accepted by Config.Name.
const (
	NameMNIST        = "mnist"
	NameFashionMNIST = "fashion_mnist"
	NameCIFAR10      = "cifar10"
	NameFolder       = "folder"
)

// Interpolation modes accepted by AugmentConfig.Interpolation.
const (
	// InterpBilinear is PyTorch's F.interpolate(mode="bilinear",
	// align_corners=False, antialias=False).
	InterpBilinear = "bilinear"
	// InterpBilinearAA is the same with antialias=True (PIL's resize
	// semantics): identical to InterpBilinear when enlarging, a wider
	// triangle filter when shrinking. Use it for folders of large images.
	InterpBilinearAA = "bilinear_aa"
)

// Mixup modes accepted by MixupConfig.Mode (timm's names).
const (
	MixBatch = "batch" // one lam and one box for the whole batch
	MixPair  = "pair"  // one lam per pair (i, B-1-i)
	MixElem  = "elem"  // one lam per element
)

// Limits of data.max_pixels: the default (50 megapixels, 150 MB decoded as
// RGB) and the largest value accepted.
const (
	DefaultMaxPixels = 50_000_000
	MaxMaxPixels     = 1_000_000_000
)

// Config is the "data" section: which data set, where its files are, and how
// the loader runs.
type Config struct {
	// Name is the data set: mnist (default) | fashion_mnist | cifar10 | folder.
	Name string `yaml:"name"`
	// Root is the directory holding the data set's files. "" = locate
	// automatically (mnist through the Go module cache, fashion_mnist through
	// dpkg); cifar10 and folder need it.
	Root string `yaml:"root"`
	// LimitTrain keeps only the first N training images (0 = all).
	LimitTrain int `yaml:"limit_train"`
	// LimitVal keeps only the first N validation images (0 = all).
	LimitVal int `yaml:"limit_val"`
	// Workers is the number of decoding/augmenting goroutines (0 = runtime.NumCPU()).
	Workers int `yaml:"workers"`
	// Prefetch is the number of batches in flight ahead of the consumer (default 4).
	Prefetch int `yaml:"prefetch"`
	// SkipCorrupt makes undecodable images in a folder data set counted and
	// logged instead of an error.
	SkipCorrupt bool `yaml:"skip_corrupt"`
	// MaxPixels refuses (or, with SkipCorrupt, skips) a folder image whose
	// header claims more than this many pixels, before it is decoded: a small
	// compressed file can expand to gigabytes. 0 = DefaultMaxPixels.
	MaxPixels int64 `yaml:"max_pixels"`
	// Mean overrides the data set's per-channel normalization mean (1 value
	// or one per channel; empty = data set default).
	Mean []float64 `yaml:"mean"`
	// Std overrides the per-channel normalization std, like Mean.
	Std []float64 `yaml:"std"`
}

// DefaultConfig returns the "data" defaults: MNIST located automatically, all
// images, one worker per CPU, 4 batches of prefetch.
func DefaultConfig() Config {
	return Config{Name: NameMNIST, Prefetch: 4, MaxPixels: DefaultMaxPixels}
}

// Validate checks every key of the "data" section.
func (c Config) Validate() error {
	switch c.Name {
	case NameMNIST, NameFashionMNIST:
	case NameCIFAR10, NameFolder:
		if c.Root == "" {
			return fmt.Errorf("data.root: required for data.name %q (the directory holding its files)", c.Name)
		}
	default:
		return fmt.Errorf("data.name: must be one of mnist, fashion_mnist, cifar10, folder, got %q", c.Name)
	}
	if c.LimitTrain < 0 {
		return fmt.Errorf("data.limit_train: must be >= 0 (0 = all), got %d", c.LimitTrain)
	}
	if c.LimitVal < 0 {
		return fmt.Errorf("data.limit_val: must be >= 0 (0 = all), got %d", c.LimitVal)
	}
	if c.Workers < 0 {
		return fmt.Errorf("data.workers: must be >= 0 (0 = one per CPU), got %d", c.Workers)
	}
	if c.MaxPixels < 0 || c.MaxPixels > MaxMaxPixels {
		return fmt.Errorf("data.max_pixels: must be in [0, %d] (0 = %d), got %d", int64(MaxMaxPixels), int64(DefaultMaxPixels), c.MaxPixels)
	}
	if c.Prefetch < 1 {
		return fmt.Errorf("data.prefetch: must be >= 1, got %d", c.Prefetch)
	}
	return validateNorm("data.mean", "data.std", c.Mean, c.Std, 0)
}

// validateNorm checks a mean/std pair: both empty, or equal lengths of 1 or
// chans (chans 0 = 1 or 3), std > 0, all finite.
func validateNorm(meanKey, stdKey string, mean, std []float64, chans int) error {
	if len(mean) == 0 && len(std) == 0 {
		return nil
	}
	if len(mean) != len(std) {
		return fmt.Errorf("%s, %s: must have the same length, got %d and %d", meanKey, stdKey, len(mean), len(std))
	}
	switch {
	case chans == 0 && len(mean) != 1 && len(mean) != 3:
		return fmt.Errorf("%s: must have 1 or 3 values, got %d", meanKey, len(mean))
	case chans != 0 && len(mean) != 1 && len(mean) != chans:
		return fmt.Errorf("%s: must have 1 or %d values (one per channel), got %d", meanKey, chans, len(mean))
	}
	for i := range mean {
		if math.IsNaN(mean[i]) || math.IsInf(mean[i], 0) {
			return fmt.Errorf("%s[%d]: must be finite, got %v", meanKey, i, mean[i])
		}
		if !(std[i] > 0) || math.IsInf(std[i], 0) {
			return fmt.Errorf("%s[%d]: must be > 0 and finite, got %v", stdKey, i, std[i])
		}
	}
	return nil
}

// AugmentConfig is the "augment" section: train-time augmentation. Every
// augmentation is off by default (digits must not be flipped); for CIFAR-10
// the usual choice is crop_padding 4, hflip 0.5.
type AugmentConfig struct {
	// CropPadding pads each side by this many zero (black) pixels and takes a
	// random crop of the original size (torchvision RandomCrop; 0 = off).
	CropPadding int `yaml:"crop_padding"`
	// HFlip is the probability of a horizontal flip (0 = off).
	HFlip float64 `yaml:"hflip"`
	// RandAugment is timm's RandAugment spec, e.g. "rand-m9-mstd0.5"
	// ("" = off). Keys: m magnitude (0..mmax), n ops per image (default 2),
	// mstd magnitude std (>100 = uniform), mmax magnitude cap (default 10),
	// p per-op probability (default 0.5), inc 1 = increasing-severity ops.
	RandAugment string `yaml:"rand_augment"`
	// REProb is the probability of timm's random erasing in pixel mode
	// (per-pixel normal noise over one box of 2%..1/3 of the area; 0 = off).
	REProb float64 `yaml:"re_prob"`
	// Interpolation of the resize to the model's image size: bilinear
	// (default; PyTorch antialias=False) or bilinear_aa (antialias=True, for
	// shrinking large images).
	Interpolation string `yaml:"interpolation"`
}

// DefaultAugmentConfig returns the "augment" defaults: no augmentation,
// bilinear resize.
func DefaultAugmentConfig() AugmentConfig {
	return AugmentConfig{Interpolation: InterpBilinear}
}

// Validate checks every key of the "augment" section.
func (c AugmentConfig) Validate() error {
	if c.CropPadding < 0 {
		return fmt.Errorf("augment.crop_padding: must be >= 0, got %d", c.CropPadding)
	}
	if !(c.HFlip >= 0 && c.HFlip <= 1) {
		return fmt.Errorf("augment.hflip: must be in [0,1], got %v", c.HFlip)
	}
	if !(c.REProb >= 0 && c.REProb <= 1) {
		return fmt.Errorf("augment.re_prob: must be in [0,1], got %v", c.REProb)
	}
	if _, err := ParseRandAugment(c.RandAugment); err != nil {
		return fmt.Errorf("augment.rand_augment: %w", err)
	}
	switch c.Interpolation {
	case InterpBilinear, InterpBilinearAA:
	default:
		return fmt.Errorf("augment.interpolation: must be bilinear or bilinear_aa, got %q", c.Interpolation)
	}
	return nil
}

// MixupConfig is the "mixup" section: timm's Mixup/CutMix and label
// smoothing (timm/data/mixup.py). Mixing is off unless mixup_alpha > 0,
// cutmix_alpha > 0 or cutmix_minmax is set; label smoothing applies to
// training targets with or without mixing.
type MixupConfig struct {
	// MixupAlpha is the Beta(α,α) parameter of mixup (0 = off).
	MixupAlpha float64 `yaml:"mixup_alpha"`
	// CutmixAlpha is the Beta(α,α) parameter of CutMix (0 = off).
	CutmixAlpha float64 `yaml:"cutmix_alpha"`
	// CutmixMinMax, when set ([min, max] fractions of the side), draws the
	// CutMix box size uniformly in that range instead of from lam, and
	// forces cutmix_alpha to 1 (as timm does).
	CutmixMinMax []float64 `yaml:"cutmix_minmax"`
	// Prob is the probability of mixing a batch (or element), default 1.
	Prob float64 `yaml:"prob"`
	// SwitchProb is the probability of CutMix instead of mixup when both are
	// on, default 0.5.
	SwitchProb float64 `yaml:"switch_prob"`
	// Mode is batch (default), pair or elem.
	Mode string `yaml:"mode"`
	// LabelSmoothing is ε: targets are ε/C off and 1-ε+ε/C on (0 = off).
	LabelSmoothing float64 `yaml:"label_smoothing"`
	// CorrectLam sets lam to the exact kept area after the CutMix box is
	// clipped to the image (default true).
	CorrectLam bool `yaml:"correct_lam"`
}

// DefaultMixupConfig returns the "mixup" defaults: off, with timm's prob 1,
// switch_prob 0.5, mode batch and correct_lam true for when it is turned on.
func DefaultMixupConfig() MixupConfig {
	return MixupConfig{Prob: 1, SwitchProb: 0.5, Mode: MixBatch, CorrectLam: true}
}

// Active reports whether the configuration mixes images (as opposed to only
// smoothing labels).
func (c MixupConfig) Active() bool {
	return c.MixupAlpha > 0 || c.CutmixAlpha > 0 || len(c.CutmixMinMax) > 0
}

// Validate checks every key of the "mixup" section.
func (c MixupConfig) Validate() error {
	if !(c.MixupAlpha >= 0) || math.IsInf(c.MixupAlpha, 0) {
		return fmt.Errorf("mixup.mixup_alpha: must be >= 0 and finite, got %v", c.MixupAlpha)
	}
	if !(c.CutmixAlpha >= 0) || math.IsInf(c.CutmixAlpha, 0) {
		return fmt.Errorf("mixup.cutmix_alpha: must be >= 0 and finite, got %v", c.CutmixAlpha)
	}
	if n := len(c.CutmixMinMax); n != 0 {
		if n != 2 {
			return fmt.Errorf("mixup.cutmix_minmax: must be empty or [min, max], got %d values", n)
		}
		lo, hi := c.CutmixMinMax[0], c.CutmixMinMax[1]
		if !(lo > 0 && lo < hi && hi <= 1) {
			return fmt.Errorf("mixup.cutmix_minmax: must satisfy 0 < min < max <= 1, got %v", c.CutmixMinMax)
		}
	}
	if !(c.Prob >= 0 && c.Prob <= 1) {
		return fmt.Errorf("mixup.prob: must be in [0,1], got %v", c.Prob)
	}
	if !(c.SwitchProb >= 0 && c.SwitchProb <= 1) {
		return fmt.Errorf("mixup.switch_prob: must be in [0,1], got %v", c.SwitchProb)
	}
	switch c.Mode {
	case MixBatch, MixPair, MixElem:
	default:
		return fmt.Errorf("mixup.mode: must be batch, pair or elem, got %q", c.Mode)
	}
	if !(c.LabelSmoothing >= 0 && c.LabelSmoothing < 1) {
		return fmt.Errorf("mixup.label_smoothing: must be in [0,1), got %v", c.LabelSmoothing)
	}
	return nil
}
