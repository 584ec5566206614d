//go:build unix

package train

import (
	"context"
	"flag"
	"runtime/debug"
	"syscall"
	"testing"
	"time"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/internal/synthimg"
	"github.com/vitgo/vit/layers"
)

// BenchmarkLoopVsStep compares, at 224×224, the training loop's img/s
// (train.Run on a JPEG folder of 500×375 and 375×500 photo-like images:
// decoding, RandAugment, antialiased resize, Mixup/CutMix and the step,
// the loader's workers overlapping the step) with the bare Step's img/s on
// batches loaded beforehand. Both run the same model, batch and recipe,
// with GOGC 20 as cmd/train. Each phase times -loop.steps steps (default
// 4) after one warm-up step; the bare step runs before and after the loop.
// It reports step_img/s, loop_img/s and loop/step_% (wall clock), and the
// same in images per second of the process's CPU time (_img/cpu-s,
// loop/step_cpu_%: what the loader and its garbage add to the step), which
// stay meaningful on a busy machine. Run it with -benchtime 1x, since each call
// times its own steps. Shapes: vit_s16 is ViT-S/16 at batch 32,
// vit_ti16 ViT-Ti/16, and vit_s16_d2 ViT-S/16 cut to 2 blocks for a quick
// check:
//
//	go test ./train -run '^$' -bench 'LoopVsStep/vit_s16$' -benchtime 1x -timeout 60m
func BenchmarkLoopVsStep(b *testing.B) {
	small := layers.Presets["vit_small_patch16_224"]
	short := small
	short.Depth = 2
	for _, bc := range []struct {
		name  string
		model layers.Config
	}{
		{"vit_s16", small},
		{"vit_ti16", layers.Presets["vit_tiny_patch16_224"]},
		{"vit_s16_d2", short},
	} {
		b.Run(bc.name, func(b *testing.B) { benchLoopVsStep(b, bc.model, 32) })
	}
}

// loopSteps is how many steps each phase of BenchmarkLoopVsStep times.
var loopSteps = flag.Int("loop.steps", 4, "steps timed in each phase of BenchmarkLoopVsStep")

func benchLoopVsStep(b *testing.B, model layers.Config, batch int) {
	steps := *loopSteps
	// The folder holds more batches than the loop takes (warm-up, timed
	// steps, the prefetched ones), so the loader works all along.
	cfg := jpegRun(b, model, batch, steps+1, steps+1+data.DefaultConfig().Prefetch+1)

	// As cmd/train runs: a tight GC target (the loader's garbage counts).
	defer debug.SetGCPercent(debug.SetGCPercent(20))
	// The bare step on two preloaded batches, before and after the loop, so
	// that a change in the machine's load between the two phases shows.
	stepWall, stepCPU := bareSteps(b, cfg, steps)

	// The loop: Run with the loader, timed from the end of the warm-up step.
	var t0, t1 time.Time
	var c0, c1 time.Duration
	n := 0
	opts := Options{Log: quietLog(), onStep: func(*run, *data.Batch, StepStats) {
		if n == 0 {
			t0, c0 = time.Now(), cpuTime()
		}
		n++
		if n == steps+1 {
			t1, c1 = time.Now(), cpuTime()
		}
	}}
	if _, err := Run(context.Background(), cfg, opts); err != nil {
		b.Fatal(err)
	}
	if n != steps+1 {
		b.Fatalf("the loop took %d steps, want %d", n, steps+1)
	}
	w2, c2 := bareSteps(b, cfg, steps)
	b.Logf("bare step before the loop %.2f s, after %.2f s (%.2f, %.2f CPU s); loop %.2f s (%.2f CPU s)",
		stepWall.Seconds()/float64(steps), w2.Seconds()/float64(steps), stepCPU.Seconds()/float64(steps), c2.Seconds()/float64(steps),
		t1.Sub(t0).Seconds()/float64(steps), (c1-c0).Seconds()/float64(steps))
	stepWall, stepCPU = stepWall+w2, stepCPU+c2
	imgs := float64(steps * batch)
	stepIPS, loopIPS := 2*imgs/stepWall.Seconds(), imgs/t1.Sub(t0).Seconds()
	b.ReportMetric(stepIPS, "step_img/s")
	b.ReportMetric(loopIPS, "loop_img/s")
	b.ReportMetric(100*loopIPS/stepIPS, "loop/step_%")
	stepCPS, loopCPS := 2*imgs/stepCPU.Seconds(), imgs/(c1-c0).Seconds()
	b.ReportMetric(stepCPS, "step_img/cpu-s")
	b.ReportMetric(loopCPS, "loop_img/cpu-s")
	b.ReportMetric(100*loopCPS/stepCPS, "loop/step_cpu_%")
}

// jpegRun writes a JPEG folder of batches batches of training images and
// returns a run of steps steps over it with DeiT's augmentation:
// RandAugment rand-m9-mstd0.5-inc1, hflip, random erasing, Mixup/CutMix,
// label smoothing, antialiased bilinear resize.
func jpegRun(b *testing.B, model layers.Config, batch, steps, batches int) Config {
	root := b.TempDir()
	if err := synthimg.WriteFolder(root, 2, batches*batch/2, 1); err != nil {
		b.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Model = model
	cfg.Data = data.Config{Name: data.NameFolder, Root: root}
	cfg.Augment = data.AugmentConfig{HFlip: 0.5, RandAugment: "rand-m9-mstd0.5-inc1", REProb: 0.25, Interpolation: data.InterpBilinearAA}
	cfg.Mixup.MixupAlpha, cfg.Mixup.CutmixAlpha, cfg.Mixup.LabelSmoothing = 0.8, 1, 0.1
	cfg.Train.Epochs, cfg.Train.MaxSteps, cfg.Train.BatchSize, cfg.Train.EvalBatchSize = 1, steps, batch, 2
	cfg.Train.OutDir, cfg.Train.LogEvery = b.TempDir(), 1000
	cfg.Checkpoint.SaveBest.Set(false)
	return cfg.WithDefaults()
}

// bareSteps times steps Step.Take calls, after one warm-up, on two batches
// loaded beforehand from cfg's training data; it returns their wall and
// process CPU time.
func bareSteps(b *testing.B, cfg Config, steps int) (wall, cpu time.Duration) {
	ds, err := data.Open(cfg.Data, data.Train, cfg.Model.InChans, data.WithLogger(quietLog()))
	if err != nil {
		b.Fatal(err)
	}
	mean, std := ds.Norm()
	loader, err := data.NewLoader(ds, loaderConfig(cfg, true, mean, std))
	if err != nil {
		b.Fatal(err)
	}
	it := loader.Epoch(0, 0)
	var xs, ts [2][]float32
	for i := range xs {
		bt, ok, err := it.Next()
		if err != nil || !ok {
			b.Fatalf("batch %d: ok %v, %v", i, ok, err)
		}
		xs[i], ts[i] = bt.X, bt.Targets
	}
	it.Close()
	m, err := layers.New(cfg.Model, tensor.Float32, cfg.Train.Seed)
	if err != nil {
		b.Fatal(err)
	}
	step, err := NewStep(m, StepConfig{Batch: cfg.Train.BatchSize, Seed: cfg.Train.Seed, Optim: cfg.Optim,
		StepsPerEpoch: loader.StepsPerEpoch(), TotalSteps: loader.StepsPerEpoch()})
	if err != nil {
		b.Fatal(err)
	}
	defer step.Close()
	var t0 time.Time
	var c0 time.Duration
	for s := 0; s <= steps; s++ {
		if s == 1 {
			t0, c0 = time.Now(), cpuTime()
		}
		if _, err := step.Take(xs[s%2], ts[s%2], s); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(t0), cpuTime() - c0
}

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
