package data_test

import (
	"fmt"

	"github.com/vitgo/vit/data"
)

// A training loader over a small in-memory data set: shuffled, augmented and
// mixed batches whose soft targets sum to 1, the same for any worker count.
func ExampleNewLoader() {
	const n, side = 10, 8
	pix := make([]uint8, n*side*side)
	labels := make([]int, n)
	for i := range labels {
		labels[i] = i % 3
		for k := 0; k < side*side; k++ {
			pix[i*side*side+k] = uint8(20*i + k)
		}
	}
	ds, err := data.NewInMemory("toy", []string{"a", "b", "c"}, 1, side, side, pix, labels)
	if err != nil {
		panic(err)
	}
	mix := data.DefaultMixupConfig()
	mix.MixupAlpha, mix.CutmixAlpha, mix.LabelSmoothing = 0.8, 1.0, 0.1
	l, err := data.NewLoader(ds, data.LoaderConfig{
		BatchSize: 4, ImgH: 16, ImgW: 16, Train: true, Seed: 1, Workers: 2,
		Augment: data.AugmentConfig{CropPadding: 2, Interpolation: data.InterpBilinear},
		Mixup:   mix, NumClasses: 3,
		Mean: []float64{0.5}, Std: []float64{0.25},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("steps per epoch:", l.StepsPerEpoch())
	it := l.Epoch(0, 0)
	defer it.Close()
	for {
		b, ok, err := it.Next()
		if err != nil {
			panic(err)
		}
		if !ok {
			break
		}
		sum := float32(0)
		for _, v := range b.Targets[:3] {
			sum += v
		}
		fmt.Printf("step %d: X %d values (N=%d, %dx%dx%d), first target row sums to %.3f\n",
			b.Step, len(b.X), b.N, b.C, b.H, b.W, sum)
		b.Release()
	}
	// Output:
	// steps per epoch: 2
	// step 0: X 1024 values (N=4, 1x16x16), first target row sums to 1.000
	// step 1: X 1024 values (N=4, 1x16x16), first target row sums to 1.000
}

func ExampleDefaultNorm() {
	for _, name := range []data.DatasetName{data.NameMNIST, data.NameFashionMNIST, data.NameCIFAR10, data.NameFolder} {
		mean, std := data.DefaultNorm(name, 3)
		fmt.Println(name, mean, std)
	}
	// Output:
	// mnist [0.1307 0.1307 0.1307] [0.3081 0.3081 0.3081]
	// fashion_mnist [0.286 0.286 0.286] [0.353 0.353 0.353]
	// cifar10 [0.4914 0.4822 0.4465] [0.247 0.2435 0.2616]
	// folder [0.485 0.456 0.406] [0.229 0.224 0.225]
}

// Label smoothing without mixing: ε/C off, 1-ε+ε/C on.
func ExampleSmoothOneHot() {
	t := make([]float32, 2*4)
	data.SmoothOneHot(t, []int{2, 0}, 4, 0.1)
	fmt.Println(t)
	// Output:
	// [0.025 0.025 0.925 0.025 0.925 0.025 0.025 0.025]
}

func ExampleParseRandAugment() {
	ra, err := data.ParseRandAugment("rand-m9-mstd0.5")
	if err != nil {
		panic(err)
	}
	fmt.Println(ra.Magnitude, ra.NumOps, ra.MagStd, ra.Prob, len(ra.OpNames()))
	// Output:
	// 9 2 0.5 0.5 15
}

// The table of data sets: one row per data.name value, with its default
// normalisation, the memory it holds once opened and the keys it needs.
func ExampleDatasets() {
	for _, d := range data.Datasets() {
		mean, std := d.Norm(1)
		fmt.Printf("%-13s gray %.4f/%.4f resident %3d MB decodes %-5v needs %v\n",
			d.Name, mean[0], std[0], d.Resident/1e6, d.Decodes, d.Requires)
	}
	// Output:
	// mnist         gray 0.1307/0.3081 resident  55 MB decodes false needs []
	// fashion_mnist gray 0.2860/0.3530 resident  55 MB decodes false needs []
	// cifar10       gray 0.4809/0.2466 resident 184 MB decodes false needs [data.root]
	// folder        gray 0.5000/0.5000 resident   0 MB decodes true  needs [data.root]
	// csv           gray 0.5000/0.5000 resident   0 MB decodes true  needs [data.train_csv data.val_csv]
}
