//go:build unix

package data

import (
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/vitgo/vit/internal/synthimg"
)

// ImageNet-like JPEG loading, stage by stage. Run with -cpu 1 for per-core
// figures; each sub-benchmark reports img/s (wall clock) and img/cpu-s
// (images per second of the process's user+system CPU time, which stays
// meaningful on a loaded machine):
//
//	go test ./data -run '^$' -bench LoaderJPEG -cpu 1 -benchtime 100x

// jpegTrainAugment is the train transform the JPEG benchmarks measure:
// DeiT's RandAugment, flip and random erasing, antialiased resize to 224.
func jpegTrainAugment() AugmentConfig {
	return AugmentConfig{HFlip: 0.5, RandAugment: "rand-m9-mstd0.5-inc1", REProb: 0.25, Interpolation: InterpBilinearAA}
}

// jpegFiles writes n photo-like JPEGs, half 500×375 and half 375×500,
// quality 90, and returns their paths.
func jpegFiles(b *testing.B, n int) []string {
	dir := b.TempDir()
	paths := make([]string, n)
	for i := range paths {
		sz := synthimg.Sizes[i%len(synthimg.Sizes)]
		paths[i] = filepath.Join(dir, fmt.Sprintf("%d.jpg", i))
		if err := synthimg.WriteJPEG(paths[i], sz[0], sz[1], uint64(i+1), 90); err != nil {
			b.Fatal(err)
		}
	}
	return paths
}

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// measure runs body b.N times (body gets the iteration) and reports img/s
// and img/cpu-s, imgs images per iteration.
func measure(b *testing.B, imgs int, body func(i int)) {
	b.ReportAllocs()
	b.ResetTimer()
	c0 := cpuTime()
	for i := 0; i < b.N; i++ {
		body(i)
	}
	cpu := cpuTime() - c0
	b.StopTimer()
	n := float64(b.N * imgs)
	b.ReportMetric(n/b.Elapsed().Seconds(), "img/s")
	if cpu > 0 {
		b.ReportMetric(n/cpu.Seconds(), "img/cpu-s")
	}
}

func BenchmarkLoaderJPEG500x375(b *testing.B) {
	const nFiles = 16
	paths := jpegFiles(b, nFiles)
	decoded := make([]Image, nFiles)
	for i, p := range paths {
		img, err := decodeImageFile(p, 3, 0)
		if err != nil {
			b.Fatal(err)
		}
		decoded[i] = img
	}
	mean, std := []float64{0.485, 0.456, 0.406}, []float64{0.229, 0.224, 0.225}
	pipe, err := NewPipeline(3, 224, 224, true, 1, jpegTrainAugment(), mean, std)
	if err != nil {
		b.Fatal(err)
	}
	dst := make([]float32, 3*224*224)
	var s scratch
	s.rs.aa = true

	b.Run("decode", func(b *testing.B) {
		measure(b, 1, func(i int) {
			if _, err := decodeImageFile(paths[i%nFiles], 3, 0); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("resize", func(b *testing.B) { // antialiased bilinear to 224×224, rounded to uint8
		measure(b, 1, func(i int) { pipe.resizeU8(decoded[i%nFiles], &s) })
	})
	resized := make([]Image, nFiles)
	for i, img := range decoded {
		resized[i] = Image{C: 3, H: 224, W: 224, Pix: append([]uint8(nil), pipe.resizeU8(img, &s)...)}
	}
	work := Image{C: 3, H: 224, W: 224, Pix: make([]uint8, 3*224*224)}
	b.Run("randaugment", func(b *testing.B) {
		measure(b, 1, func(i int) {
			copy(work.Pix, resized[i%nFiles].Pix)
			pipe.ra.apply(work, newRNG(1, 0, uint64(i), streamRandAug), pipe.fill)
		})
	})
	b.Run("normalize", func(b *testing.B) { // ToTensor, normalize, random erasing
		measure(b, 1, func(i int) {
			pipe.normalize(dst, resized[i%nFiles].Pix, 0, i)
		})
	})
	b.Run("transform", func(b *testing.B) { // resize, flip, RandAugment, normalize, erase
		measure(b, 1, func(i int) {
			if err := pipe.apply(dst, decoded[i%nFiles], 0, i, &s); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("decode+transform", func(b *testing.B) {
		measure(b, 1, func(i int) {
			img, err := decodeImageFile(paths[i%nFiles], 3, 0)
			if err != nil {
				b.Fatal(err)
			}
			if err := pipe.apply(dst, img, 0, i, &s); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// BenchmarkLoaderJPEGFolder measures the whole loader on a JPEG folder: one
// worker (per-core figure under -cpu 1), batch 32, the train transform.
func BenchmarkLoaderJPEGFolder(b *testing.B) {
	root := b.TempDir()
	if err := synthimg.WriteFolder(root, 2, 32, 1); err != nil {
		b.Fatal(err)
	}
	ds, err := Open(Config{Name: NameFolder, Root: root, Workers: 1}, Train, 3)
	if err != nil {
		b.Fatal(err)
	}
	l, err := NewLoader(ds, LoaderConfig{BatchSize: 32, ImgH: 224, ImgW: 224, Train: true, Workers: 1,
		Augment: jpegTrainAugment(), Mixup: DefaultMixupConfig(), NumClasses: 2})
	if err != nil {
		b.Fatal(err)
	}
	measure(b, ds.Len(), func(i int) {
		it := l.Epoch(i, 0)
		defer it.Close()
		for {
			bt, ok, err := it.Next()
			if err != nil {
				b.Fatal(err)
			}
			if !ok {
				return
			}
			bt.Release()
		}
	})
}
