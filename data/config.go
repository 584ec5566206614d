package data

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/vitgo/vit/internal/cfgerr"
	"github.com/vitgo/vit/internal/enum"
	"github.com/vitgo/vit/internal/optional"
)

// DatasetName names a data set, the value of Config.Name. The zero value ""
// means NameMNIST.
type DatasetName string

// Data set names accepted by Config.Name.
const (
	NameMNIST        DatasetName = "mnist"
	NameFashionMNIST DatasetName = "fashion_mnist"
	NameCIFAR10      DatasetName = "cifar10"
	NameFolder       DatasetName = "folder"
	NameCSV          DatasetName = "csv"
)

// Validate reports whether d is a known data set, a row of Datasets ("" =
// mnist).
func (d DatasetName) Validate() error {
	return enum.Check(d, datasetNames()...)
}

// Interpolation names the resize filter, the value of
// AugmentConfig.Interpolation. The zero value "" means InterpBilinear.
type Interpolation string

// Interpolation modes accepted by AugmentConfig.Interpolation.
const (
	// InterpBilinear is PyTorch's F.interpolate(mode="bilinear",
	// align_corners=False, antialias=False).
	InterpBilinear Interpolation = "bilinear"
	// InterpBilinearAA is the same with antialias=True (PIL's resize
	// semantics): identical to InterpBilinear when enlarging, a wider
	// triangle filter when shrinking. Use it for folders of large images.
	InterpBilinearAA Interpolation = "bilinear_aa"
)

// Validate reports whether i is a known interpolation ("" = bilinear).
func (i Interpolation) Validate() error {
	return enum.Check(i, InterpBilinear, InterpBilinearAA)
}

// MixMode names how Mixup/CutMix draws lam, the value of MixupConfig.Mode
// (timm's names). The zero value "" means MixBatch.
type MixMode string

// Mixup modes accepted by MixupConfig.Mode.
const (
	MixBatch MixMode = "batch" // one lam and one box for the whole batch
	MixPair  MixMode = "pair"  // one lam per pair (i, B-1-i)
	MixElem  MixMode = "elem"  // one lam per element
)

// Validate reports whether m is a known mode ("" = batch).
func (m MixMode) Validate() error {
	return enum.Check(m, MixBatch, MixPair, MixElem)
}

// Bounds on the data keys, so that a typo is an error naming the key rather
// than millions of goroutines or buffers.
const (
	MaxWorkers     = 1024 // data.workers
	MaxPrefetch    = 256  // data.prefetch, batches in flight
	MaxCropPadding = 4096 // augment.crop_padding, pixels per side
)

// Limits of data.max_pixels: the default (50 megapixels, 150 MB decoded as
// RGB) and the largest value accepted.
const (
	DefaultMaxPixels = 50_000_000
	MaxMaxPixels     = 1_000_000_000
)

// Config is the "data" section: which data set, where its files are, and how
// the loader runs. The zero value is valid and means DefaultConfig: a zero
// field means its default (see WithDefaults).
type Config struct {
	// Name is the data set, a row of Datasets: mnist (default) |
	// fashion_mnist | cifar10 | folder | csv.
	Name DatasetName `yaml:"name"`
	// Root is the directory holding the data set's files. "" = locate
	// automatically (mnist through the Go module cache, fashion_mnist through
	// dpkg); cifar10 and folder need it.
	Root string `yaml:"root"`
	// LimitTrain keeps only the first N training images (0 = all).
	LimitTrain int `yaml:"limit_train"`
	// LimitVal keeps only the first N validation images (0 = all).
	LimitVal int `yaml:"limit_val"`
	// Workers is the number of decoding/augmenting goroutines, at most
	// MaxWorkers (0 = runtime.NumCPU()).
	Workers int `yaml:"workers"`
	// Prefetch is the number of batches in flight ahead of the consumer, 1
	// to MaxPrefetch (0 = 4).
	Prefetch int `yaml:"prefetch"`
	// SkipCorrupt makes undecodable images in a folder data set counted and
	// logged instead of an error.
	SkipCorrupt bool `yaml:"skip_corrupt"`
	// MaxPixels refuses (or, with SkipCorrupt, skips) a folder image whose
	// header claims more than this many pixels, or a decode of more than
	// MaxDecodedBytes(MaxPixels) bytes, before it is decoded: a small
	// compressed file can expand to gigabytes. 0 = DefaultMaxPixels.
	MaxPixels int `yaml:"max_pixels"`
	// Mean overrides the data set's per-channel normalization mean (1 value
	// or one per channel; empty = data set default).
	Mean []float64 `yaml:"mean"`
	// Std overrides the per-channel normalization std, like Mean.
	Std []float64 `yaml:"std"`
	// TrainCSV and ValCSV are the csv data set's files, one per split: a
	// header naming the columns path and label, then one image a row (see
	// openCSV). Read only with Name csv, and written into a run's
	// config.yaml only when set, so that the other data sets' configs
	// resolve as before.
	TrainCSV string `yaml:"train_csv,omitempty"`
	ValCSV   string `yaml:"val_csv,omitempty"`
}

// DefaultConfig returns the "data" defaults: MNIST located automatically, all
// images, one worker per CPU, 4 batches of prefetch.
func DefaultConfig() Config {
	return Config{Name: NameMNIST, Prefetch: 4, MaxPixels: DefaultMaxPixels}
}

// WithDefaults returns c with its zero fields set to their defaults: name
// mnist, prefetch 4, max_pixels DefaultMaxPixels. (Workers 0 already means
// one per CPU.)
func (c Config) WithDefaults() Config {
	if c.Name == "" {
		c.Name = NameMNIST
	}
	if c.Prefetch == 0 {
		c.Prefetch = 4
	}
	if c.MaxPixels == 0 {
		c.MaxPixels = DefaultMaxPixels
	}
	return c
}

// Validate checks every key of the "data" section; each error is a
// *cfgerr.Error naming its key. Zero fields are valid (they mean the default).
func (c Config) Validate() error {
	c = c.WithDefaults()
	var errs cfgerr.List
	if err := c.Name.Validate(); err != nil {
		errs.Add("data.name", "%w", err)
	} else {
		d, _ := Lookup(c.Name)
		for _, key := range d.Requires {
			if c.keyValue(key) == "" {
				errs.Add(key, "required for data.name %q (%s)", c.Name, requiredWhat[key])
			}
		}
	}
	// A key only other data sets read is a mistake, not a no-op.
	own := ownKeys()
	for _, key := range slices.Sorted(maps.Keys(own)) {
		if owner := own[key]; owner != c.Name && c.keyValue(key) != "" {
			errs.Add(key, "is read only with data.name %s, not %q", owner, c.Name)
		}
	}
	if c.LimitTrain < 0 {
		errs.Add("data.limit_train", "must be >= 0 (0 = all), got %d", c.LimitTrain)
	}
	if c.LimitVal < 0 {
		errs.Add("data.limit_val", "must be >= 0 (0 = all), got %d", c.LimitVal)
	}
	if c.Workers < 0 || c.Workers > MaxWorkers {
		errs.Add("data.workers", "must be in [0, %d] (0 = one per CPU), got %d", MaxWorkers, c.Workers)
	}
	if c.MaxPixels < 0 || c.MaxPixels > MaxMaxPixels {
		errs.Add("data.max_pixels", "must be in [0, %d] (0 = %d), got %d", MaxMaxPixels, DefaultMaxPixels, c.MaxPixels)
	}
	if c.Prefetch < 1 || c.Prefetch > MaxPrefetch {
		errs.Add("data.prefetch", "must be in [1, %d], got %d", MaxPrefetch, c.Prefetch)
	}
	if err := validateNorm("data.mean", "data.std", c.Mean, c.Std, 0); err != nil {
		errs = append(errs, err)
	}
	return errs.Err()
}

// requiredWhat says what each key a data set may require holds.
var requiredWhat = map[string]string{
	"data.root":      "the directory holding its files",
	"data.train_csv": "the CSV file listing the training images",
	"data.val_csv":   "the CSV file listing the validation images",
}

// ownKeys maps each key that only one data set requires (data.train_csv,
// data.val_csv) to that data set.
func ownKeys() map[string]DatasetName {
	n := map[string]int{}
	owner := map[string]DatasetName{}
	for _, d := range datasets {
		for _, k := range d.Requires {
			n[k]++
			owner[k] = d.Name
		}
	}
	for k := range owner {
		if n[k] > 1 {
			delete(owner, k)
		}
	}
	return owner
}

// keyValue is the value of a string key a data set may require.
func (c Config) keyValue(key string) string {
	switch key {
	case "data.root":
		return c.Root
	case "data.train_csv":
		return c.TrainCSV
	case "data.val_csv":
		return c.ValCSV
	}
	return ""
}

// validateNorm checks a mean/std pair: both empty, or equal lengths of 1 or
// chans (chans 0 = 1 or 3), std > 0, all finite.
func validateNorm(meanKey, stdKey string, mean, std []float64, chans int) error {
	if len(mean) == 0 && len(std) == 0 {
		return nil
	}
	if len(mean) != len(std) {
		return cfgerr.New(stdKey, "must have as many values as %s, got %d and %d", meanKey, len(std), len(mean))
	}
	switch {
	case chans == 0 && len(mean) != 1 && len(mean) != 3:
		return cfgerr.New(meanKey, "must have 1 or 3 values, got %d", len(mean))
	case chans != 0 && len(mean) != 1 && len(mean) != chans:
		return cfgerr.New(meanKey, "must have 1 or %d values (one per channel), got %d", chans, len(mean))
	}
	// Inputs are normalised in float32: a value must stay finite (and a
	// std non-zero) once converted, or every input becomes 0 or ±Inf.
	for i := range mean {
		if m := float32(mean[i]); math.IsNaN(mean[i]) || math.IsInf(float64(m), 0) {
			return cfgerr.New(fmt.Sprintf("%s[%d]", meanKey, i), "must be finite in float32 (|x| < 3.4e38), got %v", mean[i])
		}
		if !cfgerr.PositiveNormal32(std[i]) { // inputs are divided by it
			return cfgerr.New(fmt.Sprintf("%s[%d]", stdKey, i), "must be > 0 and finite in float32, and not subnormal (1.2e-38 … 3.4e38), got %v", std[i])
		}
		// A pixel in [0, 1] normalised: (x − mean)/std must stay finite too.
		if q := math.Max(math.Abs(mean[i]), math.Abs(1-mean[i])) / std[i]; math.IsInf(float64(float32(q)), 0) {
			return cfgerr.New(fmt.Sprintf("%s[%d]", stdKey, i), "%v with %s %v normalises pixels to about %.3g, beyond float32", std[i], meanKey, mean[i], q)
		}
	}
	return nil
}

// AugmentConfig is the "augment" section: train-time augmentation. Every
// augmentation is off by default (digits must not be flipped); for CIFAR-10
// the usual choice is crop_padding 4, hflip 0.5. The zero value is valid and
// means the defaults (no augmentation, bilinear resize), so evaluation can
// pass AugmentConfig{}.
type AugmentConfig struct {
	// CropPadding pads each side by this many zero (black) pixels and takes a
	// random crop of the original size (torchvision RandomCrop; 0 = off; at
	// most MaxCropPadding).
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
	// (PyTorch antialias=False) or bilinear_aa (antialias=True, for
	// shrinking large images). Unset ("") it is bilinear_aa with
	// RandomResizedCrop, as timm's training transform resizes PIL images
	// (which antialias), and bilinear without (DefaultInterpolation).
	Interpolation Interpolation `yaml:"interpolation"`
	// RandomResizedCrop replaces the resize to the model's size by
	// torchvision's RandomResizedCrop (timm's default training crop): a box
	// of a random share RRCScale of the image's area and a random aspect
	// ratio RRCRatio (log-uniform) is cropped and resized to the model's
	// size with Interpolation. It excludes CropPadding.
	RandomResizedCrop bool `yaml:"random_resized_crop"`
	// RRCScale is [min, max] of the box's share of the image area, in
	// (0, 1]; nil = [0.08, 1].
	RRCScale []float64 `yaml:"rrc_scale"`
	// RRCRatio is [min, max] of the box's width/height, > 0; nil =
	// [3/4, 4/3].
	RRCRatio []float64 `yaml:"rrc_ratio"`
}

// The RandomResizedCrop defaults of torchvision and timm.
var (
	DefaultRRCScale = []float64{0.08, 1}
	DefaultRRCRatio = []float64{3.0 / 4, 4.0 / 3}
)

// DefaultAugmentConfig returns the "augment" defaults: no augmentation,
// bilinear resize (and, should random_resized_crop be turned on, its
// scale and ratio defaults).
func DefaultAugmentConfig() AugmentConfig {
	return AugmentConfig{Interpolation: InterpBilinear, RRCScale: slices.Clone(DefaultRRCScale), RRCRatio: slices.Clone(DefaultRRCRatio)}
}

// DefaultInterpolation is the resize an unset interpolation means:
// bilinear_aa with random_resized_crop (timm's RandomResizedCrop resizes a
// PIL image, which antialiases: plain bilinear differs from it by up to
// 0.45 of the pixel range when shrinking), bilinear without.
func (c AugmentConfig) DefaultInterpolation() Interpolation {
	if c.RandomResizedCrop {
		return InterpBilinearAA
	}
	return InterpBilinear
}

// WithDefaults returns c with a zero Interpolation set to
// DefaultInterpolation and nil RRCScale and RRCRatio set to DefaultRRCScale
// and DefaultRRCRatio.
func (c AugmentConfig) WithDefaults() AugmentConfig {
	if c.Interpolation == "" {
		c.Interpolation = c.DefaultInterpolation()
	}
	if c.RRCScale == nil {
		c.RRCScale = slices.Clone(DefaultRRCScale)
	}
	if c.RRCRatio == nil {
		c.RRCRatio = slices.Clone(DefaultRRCRatio)
	}
	return c
}

// Validate checks every key of the "augment" section; each error is a
// *cfgerr.Error naming its key.
func (c AugmentConfig) Validate() error {
	var errs cfgerr.List
	if c.CropPadding < 0 || c.CropPadding > MaxCropPadding {
		errs.Add("augment.crop_padding", "must be in [0, %d], got %d", MaxCropPadding, c.CropPadding)
	}
	if !(c.HFlip >= 0 && c.HFlip <= 1) {
		errs.Add("augment.hflip", "must be in [0,1], got %v", c.HFlip)
	}
	if !(c.REProb >= 0 && c.REProb <= 1) {
		errs.Add("augment.re_prob", "must be in [0,1], got %v", c.REProb)
	}
	if _, err := ParseRandAugment(c.RandAugment); err != nil {
		errs.Add("augment.rand_augment", "%v", err)
	}
	if err := c.Interpolation.Validate(); err != nil {
		errs.Add("augment.interpolation", "%w", err)
	}
	c = c.WithDefaults()
	if s := c.RRCScale; len(s) != 2 || !(s[0] > 0 && s[0] <= s[1] && s[1] <= 1) {
		errs.Add("augment.rrc_scale", "must be [min, max] with 0 < min <= max <= 1, got %v", s)
	}
	if r := c.RRCRatio; len(r) != 2 || !(r[0] > 0 && r[0] <= r[1] && !math.IsInf(r[1], 0)) {
		errs.Add("augment.rrc_ratio", "must be [min, max] with 0 < min <= max, finite, got %v", r)
	}
	if c.RandomResizedCrop && c.CropPadding > 0 {
		errs.Add("augment.random_resized_crop", "cannot be combined with augment.crop_padding %d (both are the training crop)", c.CropPadding)
	}
	return errs.Err()
}

// ValidateAt checks the keys that depend on the model's image size (h×w):
// with random_resized_crop on, an rrc_ratio range so far from the image's
// aspect that the crop would be less than one pixel high or wide
// ([60, 60] at 28×28: 28/60 rounds to 0) is refused. Call it after
// Validate; its errors are *cfgerr.Error naming augment.rrc_ratio.
func (c AugmentConfig) ValidateAt(h, w int) error {
	c = c.WithDefaults()
	if !c.RandomResizedCrop || len(c.RRCRatio) != 2 || h < 1 || w < 1 {
		return nil
	}
	if r := [2]float64(c.RRCRatio); !rrcRatioFits(h, w, r) {
		return cfgerr.New("augment.rrc_ratio", "%v leaves no crop of the model's %dx%d images: a box of width/height %v would be under one pixel high or wide (want min < %d and max > %v)",
			c.RRCRatio, h, w, c.RRCRatio, 2*w, 1/(2*float64(h)))
	}
	return nil
}

// MixupConfig is the "mixup" section: timm's Mixup/CutMix and label
// smoothing (timm/data/mixup.py). Mixing is off unless mixup_alpha > 0,
// cutmix_alpha > 0 or cutmix_minmax is set; label smoothing applies to
// training targets with or without mixing. The zero value is valid and means
// DefaultMixupConfig (off). Prob, SwitchProb and CorrectLam, whose 0 and
// false are settings that differ from their defaults, are optional: unset
// means the default, and optional.FloatOf(0) (or prob: 0 in YAML) means 0.
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
	Prob optional.Float `yaml:"prob"`
	// SwitchProb is the probability of CutMix instead of mixup when both are
	// on, default 0.5.
	SwitchProb optional.Float `yaml:"switch_prob"`
	// Mode is batch (default, also for ""), pair or elem.
	Mode MixMode `yaml:"mode"`
	// LabelSmoothing is ε: targets are ε/C off and 1-ε+ε/C on (0 = off).
	LabelSmoothing float64 `yaml:"label_smoothing"`
	// CorrectLam sets lam to the exact kept area after the CutMix box is
	// clipped to the image (default true).
	CorrectLam optional.Bool `yaml:"correct_lam"`
}

// DefaultMixupConfig returns the "mixup" defaults: off, with timm's prob 1,
// switch_prob 0.5, mode batch and correct_lam true for when it is turned on.
func DefaultMixupConfig() MixupConfig {
	return MixupConfig{Prob: optional.FloatOf(1), SwitchProb: optional.FloatOf(0.5), Mode: MixBatch, CorrectLam: optional.BoolOf(true)}
}

// Active reports whether the configuration mixes images (as opposed to only
// smoothing labels).
func (c MixupConfig) Active() bool {
	return c.MixupAlpha > 0 || c.CutmixAlpha > 0 || len(c.CutmixMinMax) > 0
}

// WithDefaults returns c with a zero Mode set to batch and unset Prob,
// SwitchProb and CorrectLam set to DefaultMixupConfig's values.
func (c MixupConfig) WithDefaults() MixupConfig {
	d := DefaultMixupConfig()
	if c.Mode == "" {
		c.Mode = d.Mode
	}
	c.Prob = c.Prob.Or(d.Prob)
	c.SwitchProb = c.SwitchProb.Or(d.SwitchProb)
	c.CorrectLam = c.CorrectLam.Or(d.CorrectLam)
	return c
}

// Validate checks every key of the "mixup" section; each error is a
// *cfgerr.Error naming its key. Zero fields are valid (they mean the
// default).
func (c MixupConfig) Validate() error {
	c = c.WithDefaults()
	var errs cfgerr.List
	if !(c.MixupAlpha >= 0) || math.IsInf(c.MixupAlpha, 0) {
		errs.Add("mixup.mixup_alpha", "must be >= 0 and finite, got %v", c.MixupAlpha)
	}
	if !(c.CutmixAlpha >= 0) || math.IsInf(c.CutmixAlpha, 0) {
		errs.Add("mixup.cutmix_alpha", "must be >= 0 and finite, got %v", c.CutmixAlpha)
	}
	if n := len(c.CutmixMinMax); n != 0 {
		if n != 2 {
			errs.Add("mixup.cutmix_minmax", "must be empty or [min, max], got %d values", n)
		} else if lo, hi := c.CutmixMinMax[0], c.CutmixMinMax[1]; !(lo > 0 && lo < hi && hi <= 1) {
			errs.Add("mixup.cutmix_minmax", "must satisfy 0 < min < max <= 1, got %v", c.CutmixMinMax)
		}
	}
	if p := c.Prob.Value(); !(p >= 0 && p <= 1) {
		errs.Add("mixup.prob", "must be in [0,1], got %v", p)
	}
	if p := c.SwitchProb.Value(); !(p >= 0 && p <= 1) {
		errs.Add("mixup.switch_prob", "must be in [0,1], got %v", p)
	}
	if err := c.Mode.Validate(); err != nil {
		errs.Add("mixup.mode", "%w", err)
	}
	if !(c.LabelSmoothing >= 0 && c.LabelSmoothing < 1) {
		errs.Add("mixup.label_smoothing", "must be in [0,1), got %v", c.LabelSmoothing)
	}
	return errs.Err()
}
