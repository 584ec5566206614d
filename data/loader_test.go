package data

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// synth returns an in-memory data set of n random c×h×w images, 10 classes.
func synth(t *testing.T, n, c, h, w int) *InMemory {
	t.Helper()
	r := newRNG(99)
	pix := make([]uint8, n*c*h*w)
	for i := range pix {
		pix[i] = uint8(r.intn(256))
	}
	labels := make([]int, n)
	for i := range labels {
		labels[i] = (i * 7) % 10
	}
	ds, err := NewInMemory("synthetic", mnistClasses, c, h, w, pix, labels)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// snapshot is a deep copy of a batch.
type snapshot struct {
	X       []float32
	Targets []float32
	Labels  []int
	Indices []int
	N, Step int
}

func snap(b *Batch) snapshot {
	return snapshot{append([]float32(nil), b.X...), append([]float32(nil), b.Targets...),
		append([]int(nil), b.Labels...), append([]int(nil), b.Indices...), b.N, b.Step}
}

// collect runs one epoch from startStep; release hands batches back after copying.
func collect(t *testing.T, l *Loader, epoch, start int, release bool) []snapshot {
	t.Helper()
	it := l.Epoch(epoch, start)
	defer it.Close()
	var out []snapshot
	var held []*Batch
	for {
		b, ok, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		out = append(out, snap(b))
		if release {
			b.Release()
		} else {
			held = append(held, b)
		}
	}
	// Held batches must still hold what they held when handed out.
	for i, b := range held {
		if !slices.Equal(b.X, out[i].X) {
			t.Fatalf("batch %d was overwritten while held", i)
		}
	}
	return out
}

func sameBatches(t *testing.T, what string, a, b []snapshot) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d vs %d batches", what, len(a), len(b))
	}
	for i := range a {
		if a[i].Step != b[i].Step || a[i].N != b[i].N || !slices.Equal(a[i].X, b[i].X) || !slices.Equal(a[i].Targets, b[i].Targets) ||
			fmt.Sprint(a[i].Labels, a[i].Indices) != fmt.Sprint(b[i].Labels, b[i].Indices) {
			t.Fatalf("%s: batch %d differs", what, i)
		}
	}
}

func trainCfg(workers int) LoaderConfig {
	return LoaderConfig{
		BatchSize: 8, ImgH: 16, ImgW: 14, Train: true, Seed: 1234, Workers: workers, Prefetch: 2,
		Augment: AugmentConfig{CropPadding: 2, HFlip: 0.5, REProb: 0.25, RandAugment: "rand-m9-mstd0.5", Interpolation: InterpBilinear},
		Mixup: mixCfg(func(c *MixupConfig) {
			c.MixupAlpha, c.CutmixAlpha, c.LabelSmoothing = 0.8, 1, 0.1
		}),
		NumClasses: 10,
	}
}

func TestLoaderDeterministicAcrossWorkers(t *testing.T) {
	ds := synth(t, 70, 3, 12, 12)
	l1, err := NewLoader(ds, trainCfg(1))
	if err != nil {
		t.Fatal(err)
	}
	cfg4 := trainCfg(4)
	cfg4.Prefetch = 5
	l4, err := NewLoader(ds, cfg4)
	if err != nil {
		t.Fatal(err)
	}
	if l1.StepsPerEpoch() != 8 {
		t.Fatalf("steps %d, want ⌊70/8⌋ = 8", l1.StepsPerEpoch())
	}
	a := collect(t, l1, 2, 0, false)
	b := collect(t, l4, 2, 0, true)
	sameBatches(t, "1 vs 4 workers", a, b)
	// A second run over the same loader, batches released and recycled.
	sameBatches(t, "rerun with recycled buffers", a, collect(t, l4, 2, 0, true))

	// Each epoch visits distinct images; epochs differ.
	seen := map[int]bool{}
	for _, s := range a {
		checkRowsSumToOne(t, s.Targets, 10)
		for _, i := range s.Indices {
			if seen[i] {
				t.Fatalf("index %d twice in one epoch", i)
			}
			seen[i] = true
		}
	}
	if len(seen) != 64 {
		t.Fatalf("%d images in the epoch, want 64 (last partial batch dropped)", len(seen))
	}
	other := collect(t, l1, 3, 0, true)
	if fmt.Sprint(other[0].Indices) == fmt.Sprint(a[0].Indices) {
		t.Fatal("epochs 2 and 3 start with the same order")
	}
}

func TestLoaderRestartMidEpoch(t *testing.T) {
	ds := synth(t, 50, 1, 10, 10)
	l, err := NewLoader(ds, trainCfg(3))
	if err != nil {
		t.Fatal(err)
	}
	full := collect(t, l, 1, 0, true)
	for _, k := range []int{1, 4, len(full)} {
		tail := collect(t, l, 1, k, true)
		sameBatches(t, fmt.Sprintf("restart at %d", k), full[k:], tail)
	}
}

func TestLoaderEvalKeepsEveryImage(t *testing.T) {
	ds := synth(t, 21, 1, 10, 10)
	cfg := trainCfg(2)
	cfg.Train = false
	l, err := NewLoader(ds, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if l.StepsPerEpoch() != 3 {
		t.Fatalf("eval steps %d, want ⌈21/8⌉ = 3", l.StepsPerEpoch())
	}
	bs := collect(t, l, 0, 0, false)
	if len(bs) != 3 || bs[2].N != 5 || len(bs[2].X) != 5*16*14 || len(bs[2].Targets) != 50 {
		t.Fatalf("last batch N %d", bs[2].N)
	}
	p, _ := NewPipeline(1, 16, 14, false, 0, DefaultAugmentConfig(), []float64{0.5}, []float64{0.5})
	next := 0
	for _, b := range bs {
		for i, idx := range b.Indices {
			if idx != next {
				t.Fatalf("eval order: index %d at position %d", idx, next)
			}
			next++
			img, label, _ := ds.Item(idx)
			want := make([]float32, 16*14)
			p.Apply(want, img, 0, 0)
			if !slices.Equal(b.X[i*224:(i+1)*224], want) {
				t.Fatalf("eval image %d is not resize+normalize", idx)
			}
			row := b.Targets[i*10 : (i+1)*10]
			for c, v := range row {
				if (c == label) != (v == 1) || (c != label && v != 0) {
					t.Fatalf("eval target row %v for label %d (want plain one-hot)", row, label)
				}
			}
		}
	}
	// Evaluation is the same whatever the seed, epoch or worker count.
	cfg.Seed, cfg.Workers = 5, 1
	l2, _ := NewLoader(ds, cfg)
	sameBatches(t, "eval", bs, collect(t, l2, 7, 0, true))
}

func TestLoaderOnMNIST(t *testing.T) {
	root := mnistRoot(t)
	cfg := DefaultConfig()
	cfg.Root, cfg.LimitTrain = root, 96
	ds, err := Open(cfg, Train, 1)
	if err != nil {
		t.Fatal(err)
	}
	lc := LoaderConfig{BatchSize: 32, ImgH: 32, ImgW: 32, Train: true, Seed: 7, Workers: 2,
		Augment: AugmentConfig{CropPadding: 2, REProb: 0.25, Interpolation: InterpBilinear},
		Mixup:   mixCfg(func(c *MixupConfig) { c.MixupAlpha, c.CutmixAlpha, c.LabelSmoothing = 0.8, 1, 0.1 }), NumClasses: 10}
	l, err := NewLoader(ds, lc)
	if err != nil {
		t.Fatal(err)
	}
	bs := collect(t, l, 0, 0, true)
	if len(bs) != 3 || bs[0].N != 32 || len(bs[0].X) != 32*32*32 {
		t.Fatalf("%d batches", len(bs))
	}
	lc.Workers = 4
	l4, _ := NewLoader(ds, lc)
	sameBatches(t, "MNIST 2 vs 4 workers", bs, collect(t, l4, 0, 0, true))
}

func TestLoaderCloseEarlyStopsGoroutines(t *testing.T) {
	ds := synth(t, 200, 1, 8, 8)
	cfg := trainCfg(4)
	cfg.ImgH, cfg.ImgW = 8, 8
	l, _ := NewLoader(ds, cfg)
	before := runtime.NumGoroutine()
	for k := 0; k < 5; k++ {
		it := l.Epoch(0, 0)
		if _, ok, err := it.Next(); !ok || err != nil {
			t.Fatal(ok, err)
		}
		it.Close()
		it.Close()
		if _, ok, _ := it.Next(); ok {
			t.Fatal("Next after Close returned a batch")
		}
	}
	// Close waits for the loader's goroutines to return; a returning
	// goroutine still counts until it has exited, so the count is polled.
	// The minute is a bound only.
	deadline := time.Now().Add(time.Minute)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("%d goroutines after Close, %d before", n, before)
	}
}

// failing is a data set whose item 5 fails or carries a bad label.
type failing struct {
	*InMemory
	label bool
}

func (f failing) Item(i int) (Image, int, error) {
	img, l, err := f.InMemory.Item(i)
	if i == 5 {
		if f.label {
			return img, 12, nil
		}
		return Image{}, 0, errors.New("disk on fire")
	}
	return img, l, err
}

func TestLoaderErrors(t *testing.T) {
	ds := synth(t, 20, 1, 8, 8)
	base := LoaderConfig{BatchSize: 4, ImgH: 8, ImgW: 8, Train: true, NumClasses: 10,
		Augment: DefaultAugmentConfig(), Mixup: DefaultMixupConfig()}
	bad := []struct {
		name string
		mut  func(*LoaderConfig)
		want string
	}{
		{"batch", func(c *LoaderConfig) { c.BatchSize = 0 }, "batch size"},
		{"size", func(c *LoaderConfig) { c.ImgW = 0 }, "image size"},
		{"classes", func(c *LoaderConfig) { c.NumClasses = 9 }, "num_classes is 9"},
		{"odd mixup", func(c *LoaderConfig) { c.BatchSize, c.Mixup.MixupAlpha = 5, 1 }, "even batch size"},
		{"too few", func(c *LoaderConfig) { c.BatchSize = 21 }, "fewer than one batch"},
		{"augment", func(c *LoaderConfig) { c.Augment.HFlip = 2 }, "augment.hflip"},
		{"mixup", func(c *LoaderConfig) { c.Mixup.Mode = "row" }, "mixup.mode"},
		{"norm", func(c *LoaderConfig) { c.Mean, c.Std = []float64{0.1, 0.2}, []float64{1, 1} }, "mean"},
		{"minmax", func(c *LoaderConfig) { c.Mixup.CutmixMinMax = []float64{0.5, 0.55} }, "cutmix_minmax"},
	}
	for _, b := range bad {
		cfg := base
		b.mut(&cfg)
		_, err := NewLoader(ds, cfg)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s: error %v, want one mentioning %q", b.name, err, b.want)
		}
	}
	for _, f := range []failing{{ds, false}, {ds, true}} {
		cfg := base
		cfg.Train = false
		l, err := NewLoader(f, cfg)
		if err != nil {
			t.Fatal(err)
		}
		it := l.Epoch(0, 0)
		var got error
		for {
			_, ok, err := it.Next()
			if err != nil {
				got = err
				break
			}
			if !ok {
				break
			}
		}
		it.Close()
		want := "disk on fire"
		if f.label {
			want = "label 12"
		}
		if got == nil || !strings.Contains(got.Error(), "item 5") || !strings.Contains(got.Error(), want) {
			t.Errorf("item error %v, want one naming item 5 and %q", got, want)
		}
	}
	l, _ := NewLoader(ds, base)
	for _, s := range []int{-1, l.StepsPerEpoch() + 1} {
		it := l.Epoch(0, s)
		if _, _, err := it.Next(); err == nil {
			t.Errorf("start step %d accepted", s)
		}
		it.Close()
	}
}
