package data

import "testing"

// benchLoader measures images per second through a whole epoch.
func benchLoader(b *testing.B, ds Dataset, cfg LoaderConfig) {
	l, err := NewLoader(ds, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	imgs := 0
	for i := 0; i < b.N; i++ {
		it := l.Epoch(i, 0)
		for {
			bt, ok, err := it.Next()
			if err != nil {
				b.Fatal(err)
			}
			if !ok {
				break
			}
			imgs += bt.N
			bt.Release()
		}
		it.Close()
	}
	b.ReportMetric(float64(imgs)/b.Elapsed().Seconds(), "img/s")
}

func benchData(b *testing.B, n, c, h, w int) *InMemory {
	r := newRNG(1)
	pix := make([]uint8, n*c*h*w)
	for i := range pix {
		pix[i] = uint8(r.intn(256))
	}
	labels := make([]int, n)
	ds, err := NewInMemory("bench", mnistClasses, c, h, w, pix, labels)
	if err != nil {
		b.Fatal(err)
	}
	return ds
}

func BenchmarkLoaderMNISTPlain(b *testing.B) {
	benchLoader(b, benchData(b, 4096, 1, 28, 28), LoaderConfig{BatchSize: 128, ImgH: 28, ImgW: 28, Train: true,
		Workers: 2, Augment: DefaultAugmentConfig(), Mixup: DefaultMixupConfig(), NumClasses: 10})
}

func BenchmarkLoaderMNISTAugMix(b *testing.B) {
	mix := DefaultMixupConfig()
	mix.MixupAlpha, mix.CutmixAlpha, mix.LabelSmoothing = 0.8, 1, 0.1
	benchLoader(b, benchData(b, 4096, 1, 28, 28), LoaderConfig{BatchSize: 128, ImgH: 32, ImgW: 32, Train: true,
		Workers: 2, Augment: AugmentConfig{CropPadding: 2, REProb: 0.25, Interpolation: InterpBilinear}, Mixup: mix, NumClasses: 10})
}

func BenchmarkLoaderCIFARRandAugment(b *testing.B) {
	benchLoader(b, benchData(b, 2048, 3, 32, 32), LoaderConfig{BatchSize: 128, ImgH: 32, ImgW: 32, Train: true,
		Workers: 2, Augment: AugmentConfig{CropPadding: 4, HFlip: 0.5, RandAugment: "rand-m9-mstd0.5", REProb: 0.25,
			Interpolation: InterpBilinear}, Mixup: DefaultMixupConfig(), NumClasses: 10})
}

func BenchmarkLoaderRGB256To224AA(b *testing.B) {
	benchLoader(b, benchData(b, 256, 3, 256, 256), LoaderConfig{BatchSize: 64, ImgH: 224, ImgW: 224, Train: false,
		Workers: 2, Augment: AugmentConfig{Interpolation: InterpBilinearAA}, Mixup: DefaultMixupConfig(), NumClasses: 10})
}
