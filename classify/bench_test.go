package classify

import (
	"context"
	"fmt"
	"image"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/checkpoint"
	"github.com/vitgo/vit/evaluate"
	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/layers"
)

// benchCheckpoint writes a randomly initialised model of a layers preset,
// e.g. vit_tiny_patch16_224 (the configs/vit_tiny_patch16_224.yaml model: 3
// channels, 1000 classes).
func benchCheckpoint(b *testing.B, preset string) string {
	b.Helper()
	m, err := layers.New(layers.Presets[preset], tensor.Float32, 0)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), preset+".safetensors")
	meta := checkpoint.ModelMeta{Dataset: "folder", Mean: []float64{0.485, 0.456, 0.406}, Std: []float64{0.229, 0.224, 0.225}}
	if err := checkpoint.SaveModel(path, m, meta, nil); err != nil {
		b.Fatal(err)
	}
	return path
}

// benchImage is an opaque 224×224 RGBA image, what a PNG without alpha
// decodes to (a varying alpha would time Go's per-pixel colour conversion
// of translucent pixels instead of the model).
func benchImage() image.Image {
	img := image.NewRGBA(image.Rect(0, 0, 224, 224))
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 7)
		if i%4 == 3 {
			img.Pix[i] = 0xff
		}
	}
	return img
}

// BenchmarkViTTiny224 measures ViT-Ti/16 at 224 on one 224×224 image per
// call: "latency" is one caller (p50 over b.N calls), "callers8" eight
// goroutines calling at once (images per second), for several pool shapes.
// Run with -cpu 2 (the peer's 2 threads) and -benchtime as a count, e.g.
//
//	go test ./classify -run '^$' -bench ViTTiny224 -cpu 2 -benchtime 20x
func BenchmarkViTTiny224(b *testing.B) { benchClassify(b, "vit_tiny_patch16_224", graph.FP32) }

// BenchmarkViTSmall224 is BenchmarkViTTiny224 for ViT-S/16 at 224.
func BenchmarkViTSmall224(b *testing.B) { benchClassify(b, "vit_small_patch16_224", graph.FP32) }

// BenchmarkViTTiny224Int8 is BenchmarkViTTiny224 with int8 products
// (Options.Precision graph.INT8).
func BenchmarkViTTiny224Int8(b *testing.B) { benchClassify(b, "vit_tiny_patch16_224", graph.INT8) }

// BenchmarkViTSmall224Int8 is BenchmarkViTSmall224 with int8 products.
func BenchmarkViTSmall224Int8(b *testing.B) { benchClassify(b, "vit_small_patch16_224", graph.INT8) }

func benchClassify(b *testing.B, preset string, prec graph.Precision) {
	if testing.Short() {
		b.Skip("-short")
	}
	ckpt := benchCheckpoint(b, preset)
	img := benchImage()
	for _, o := range []Options{{PoolSize: 1, MaxBatch: 8}, {PoolSize: 2, MaxBatch: 4}, {PoolSize: 1, MaxBatch: 1}, {PoolSize: 2, MaxBatch: 1}} {
		o.Precision = prec
		c, err := Load(ckpt, o)
		if err != nil {
			b.Fatal(err)
		}
		shape := fmt.Sprintf("pool%d_batch%d", o.PoolSize, o.MaxBatch)
		if o.PoolSize == 1 && o.MaxBatch == 8 {
			b.Run("latency_"+shape, func(b *testing.B) {
				classifyOne(b, c, img) // warm up
				d := make([]time.Duration, b.N)
				b.ResetTimer()
				for i := range d {
					t0 := time.Now()
					classifyOne(b, c, img)
					d[i] = time.Since(t0)
				}
				b.StopTimer()
				sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
				b.ReportMetric(float64(d[len(d)/2].Microseconds())/1000, "p50_ms")
			})
		}
		b.Run("callers8_"+shape, func(b *testing.B) {
			classifyOne(b, c, img)
			s0 := c.Stats()
			b.ResetTimer()
			var wg sync.WaitGroup
			var mu sync.Mutex
			next := 0
			t0 := time.Now()
			for g := 0; g < 8; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						mu.Lock()
						i := next
						next++
						mu.Unlock()
						if i >= b.N {
							return
						}
						classifyOne(b, c, img)
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			b.ReportMetric(float64(b.N)/time.Since(t0).Seconds(), "img/s")
			s := c.Stats()
			b.ReportMetric(float64(s.Images-s0.Images)/float64(s.Batches-s0.Batches), "mean_batch")
		})
		c.Close()
	}
}

// BenchmarkViTTiny224Forward times the bare graph run of one lane at batch
// 1, 4 and 8 (ms per image): what batching saves, or costs, per image.
func BenchmarkViTTiny224Forward(b *testing.B) {
	c, err := Load(benchCheckpoint(b, "vit_tiny_patch16_224"), Options{MaxBatch: 8})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	x := make([]float32, 8*3*224*224)
	for i := range x {
		x[i] = float32(i%255)/127 - 1
	}
	for _, ev := range c.lanes[0].evals {
		n := ev.Graph().Batch
		if n == 2 {
			continue
		}
		b.Run(fmt.Sprintf("batch%d", n), func(b *testing.B) {
			ev.Logits(x[:n*3*224*224], n)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := ev.Logits(x[:n*3*224*224], n); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N*n), "ms/img")
		})
	}
}

func classifyOne(b *testing.B, c *Classifier, img image.Image) {
	if _, err := c.Classify(context.Background(), []image.Image{img}); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkFrozenAB times the serving graph (evaluate.NewFrozenIn,
// what a Classifier runs) against the evaluation graph that keeps attention
// maps (evaluate.NewMaps: Linear and Attention as training runs them,
// the classifier's graph before Frozen) on the same random ViT-Ti/16 or
// ViT-S/16 at 224,
// alternating one forward of each per iteration so that both see the same
// load: the fastest ms per image of each, the median over iterations of
// the ratio of the two adjacent forwards' times, and the ratio of the CPU
// time (user + system, both cores) the two spent in all. On a shared machine
// compare the ratios, not the times.
//
//	go test ./classify -run '^$' -bench FrozenAB -cpu 2 -benchtime 10x
func BenchmarkFrozenAB(b *testing.B) {
	if testing.Short() {
		b.Skip("-short")
	}
	for _, preset := range []string{"vit_tiny_patch16_224", "vit_small_patch16_224"} {
		m, err := layers.New(layers.Presets[preset], tensor.Float32, 0)
		if err != nil {
			b.Fatal(err)
		}
		for _, n := range []int{1, 8} {
			b.Run(fmt.Sprintf("%s/batch%d", preset, n), func(b *testing.B) {
				plain, err := evaluate.NewMaps(m, n)
				if err != nil {
					b.Fatal(err)
				}
				defer plain.Close()
				frozen, err := evaluate.NewFrozenIn(m, n, graph.NewArena())
				if err != nil {
					b.Fatal(err)
				}
				defer frozen.Close()
				c := m.Config
				x := make([]float32, n*c.InChans*c.ImgSize[0]*c.ImgSize[1])
				for i := range x {
					x[i] = float32(i%255)/127 - 1
				}
				var cpuPlain, cpuFrozen time.Duration
				run := func(ev *evaluate.Evaluator) time.Duration {
					c0, t0 := processCPU(), time.Now()
					if _, err := ev.Logits(x, n); err != nil {
						b.Fatal(err)
					}
					d, cpu := time.Since(t0), processCPU()-c0
					if ev == plain {
						cpuPlain += cpu
					} else {
						cpuFrozen += cpu
					}
					return d
				}
				run(plain)
				run(frozen)
				cpuPlain, cpuFrozen = 0, 0
				tp, tf := make([]time.Duration, b.N), make([]time.Duration, b.N)
				ratio := make([]float64, b.N)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if i%2 == 0 {
						tp[i] = run(plain)
						tf[i] = run(frozen)
					} else {
						tf[i] = run(frozen)
						tp[i] = run(plain)
					}
					ratio[i] = float64(tp[i]) / float64(tf[i])
				}
				b.StopTimer()
				ms := func(d []time.Duration) float64 {
					slices.Sort(d)
					return float64(d[0].Microseconds()) / 1000 / float64(n)
				}
				slices.Sort(ratio)
				b.ReportMetric(ms(tp), "plain_min_ms/img")
				b.ReportMetric(ms(tf), "frozen_min_ms/img")
				b.ReportMetric(ratio[len(ratio)/2], "speedup_median")
				if cpuFrozen > 0 {
					b.ReportMetric(float64(cpuPlain)/float64(cpuFrozen), "cpu_ratio")
				}
			})
		}
	}
}
