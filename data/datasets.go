package data

import (
	"math"
	"runtime"
	"slices"
)

// DatasetInfo is one row of the data-set table (Datasets): everything the
// rest of the module knows about a data set, so that adding one is a row
// plus its reader, as timm's create_dataset maps a name to one class.
type DatasetInfo struct {
	// Name is data.name's value.
	Name DatasetName
	// Open reads one split, converted to inChans channels, keeping at most
	// limit images (0 = all), normalised by mean and std (already resolved:
	// the config's or Norm's).
	Open func(cfg Config, split Split, inChans, limit int, mean, std []float64, log Logger) (Dataset, error)
	// Mean and Std are the default normalisation, one value or three (RGB);
	// DefaultNorm broadcasts them to the model's channels (RGB to gray by
	// ITU-R 601 luma). GrayMean and GrayStd, when set, replace that luma
	// for one channel.
	Mean, Std         []float64
	GrayMean, GrayStd []float64
	// Resident is the memory both splits hold once opened, in bytes (0: the
	// images are decoded as they are needed).
	Resident int64
	// Decodes is true for a data set of image files decoded by the loader's
	// workers: its decodes in flight count against the decode budget
	// (DecodeBytes).
	Decodes bool
	// Locate finds the files when data.root is empty; nil means the keys in
	// Requires must be set.
	Locate func() (string, error)
	// Requires lists the config keys this data set cannot do without.
	Requires []string
	// SplitKeys are the keys naming where the training and the validation
	// split's files are, for the data-parallel ranks' errors; zero means
	// data.root for both.
	SplitKeys [2]string
}

// imagenetMean and imagenetStd are timm's IMAGENET_DEFAULT_MEAN and _STD,
// the default of the data sets of image files.
var (
	imagenetMean = []float64{0.485, 0.456, 0.406}
	imagenetStd  = []float64{0.229, 0.224, 0.225}
	halfNorm     = []float64{0.5}
)

// datasets is the table, in the order docs/configuration.md lists them.
// It is set by init: the readers reach DefaultNorm, which reads the table.
var datasets []DatasetInfo

func init() { datasets = table() }

func table() []DatasetInfo {
	return []DatasetInfo{
		{Name: NameMNIST, Open: openIDX, Mean: []float64{0.1307}, Std: []float64{0.3081},
			Resident: 70000 * (28*28 + 8), Locate: LocateMNIST},
		{Name: NameFashionMNIST, Open: openIDX, Mean: []float64{0.2860}, Std: []float64{0.3530},
			Resident: 70000 * (28*28 + 8), Locate: LocateFashionMNIST},
		{Name: NameCIFAR10, Open: openCIFARSplit, Mean: []float64{0.4914, 0.4822, 0.4465}, Std: []float64{0.2470, 0.2435, 0.2616},
			Resident: 60000 * (32*32*3 + 8), Requires: []string{"data.root"}},
		{Name: NameFolder, Open: openFolderSplit, Mean: imagenetMean, Std: imagenetStd, GrayMean: halfNorm, GrayStd: halfNorm,
			Decodes: true, Requires: []string{"data.root"}},
		{Name: NameCSV, Open: openCSVSplit, Mean: imagenetMean, Std: imagenetStd, GrayMean: halfNorm, GrayStd: halfNorm,
			Decodes: true, Requires: []string{"data.train_csv", "data.val_csv"}, SplitKeys: [2]string{"data.train_csv", "data.val_csv"}},
	}
}

// Datasets returns the table of data sets, one row per data.name value (a
// copy: the table itself is not changed through it).
func Datasets() []DatasetInfo { return slices.Clone(datasets) }

// Lookup returns the row of the data set named name (a config's name after
// WithDefaults: "" is no row).
func Lookup(name DatasetName) (DatasetInfo, bool) {
	for _, d := range datasets {
		if d.Name == name {
			return d, true
		}
	}
	return DatasetInfo{}, false
}

// datasetNames lists the table's names.
func datasetNames() []DatasetName {
	out := make([]DatasetName, len(datasets))
	for i, d := range datasets {
		out[i] = d.Name
	}
	return out
}

// Norm returns d's default normalisation for inChans channels.
func (d DatasetInfo) Norm(inChans int) (mean, std []float64) {
	m, s := d.Mean, d.Std
	if inChans == 1 && d.GrayMean != nil {
		m, s = d.GrayMean, d.GrayStd
	}
	if len(m) == 3 && inChans == 1 {
		return []float64{luma(m)}, []float64{luma(s)}
	}
	return broadcast(m, inChans), broadcast(s, inChans)
}

// ResidentBytes is the memory of the data set c names that is held once
// opened (both splits; the table's Resident), for the memory estimate.
func ResidentBytes(c Config) float64 {
	d, _ := Lookup(c.Name)
	return float64(d.Resident)
}

// DecodeBytes bounds the memory of the decodes in flight of a data set of
// image files (the table's Decodes; 0 for the others): each of data.workers
// decodes may hold an image at the decoded-bytes limit (Header.Cost: the
// decoded image and its CHW copy), and all of them together at most the
// shared decode budget they wait on (SharedBudget).
func DecodeBytes(c Config) float64 {
	if d, _ := Lookup(c.Name); !d.Decodes {
		return 0
	}
	workers := c.Workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	px := int64(c.MaxPixels)
	if px <= 0 {
		px = DefaultMaxPixels
	}
	perImage := float64(MaxDecodedBytes(px) + 3*px)
	return math.Min(float64(workers)*perImage, float64(SharedBudget().Total()))
}

// openIDX opens MNIST or Fashion-MNIST.
func openIDX(cfg Config, split Split, inChans, limit int, mean, std []float64, _ Logger) (Dataset, error) {
	return openIDXDataset(cfg, split, inChans, limit, mean, std)
}

func openCIFARSplit(cfg Config, split Split, inChans, limit int, mean, std []float64, _ Logger) (Dataset, error) {
	return openCIFAR(cfg.Root, split, inChans, limit, mean, std)
}

func openFolderSplit(cfg Config, split Split, inChans, limit int, mean, std []float64, log Logger) (Dataset, error) {
	return openFolder(cfg, split, inChans, limit, mean, std, log)
}

// SplitSource is the config key, and its value, that says where split's
// files are: its row's SplitKeys (data.train_csv or data.val_csv for csv),
// or data.root ("" when located). Data-parallel ranks name it when their
// data differ.
func (c Config) SplitSource(s Split) (key, value string) {
	d, _ := Lookup(c.Name)
	key = d.SplitKeys[0]
	if s == Val {
		key = d.SplitKeys[1]
	}
	if key == "" {
		key = "data.root"
	}
	return key, c.keyValue(key)
}
