package data

import (
	"math"
	"slices"
	"testing"
)

func testImage(c, h, w int, seed uint64) Image {
	r := newRNG(seed)
	img := Image{C: c, H: h, W: w, Pix: make([]uint8, c*h*w)}
	for i := range img.Pix {
		img.Pix[i] = uint8(r.intn(256))
	}
	return img
}

func TestPipelineEvalIsResizeNormalize(t *testing.T) {
	for _, tc := range []struct{ c, h, w, oh, ow int }{{1, 28, 28, 56, 56}, {3, 10, 12, 10, 12}, {3, 40, 30, 16, 24}} {
		img := testImage(tc.c, tc.h, tc.w, 1)
		mean, std := []float64{0.4, 0.5, 0.6}[:tc.c], []float64{0.2, 0.25, 0.3}[:tc.c]
		p, err := NewPipeline(tc.c, tc.oh, tc.ow, false, 7, DefaultAugmentConfig(), mean, std)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]float32, tc.c*tc.oh*tc.ow)
		if err := p.Apply(got, img, 3, 5); err != nil {
			t.Fatal(err)
		}
		x := make([]float32, len(img.Pix))
		for i, v := range img.Pix {
			x[i] = float32(v) / 255
		}
		want := Resize(x, tc.c, tc.h, tc.w, tc.oh, tc.ow, false)
		hw := tc.oh * tc.ow
		for i := range want {
			ch := i / hw
			w := (want[i] - float32(mean[ch])) / float32(std[ch])
			if got[i] != w {
				t.Fatalf("%+v: value %d = %v, want %v", tc, i, got[i], w)
			}
		}
		// Evaluation ignores epoch and position.
		again := make([]float32, len(got))
		p.Apply(again, img, 9, 1)
		for i := range got {
			if got[i] != again[i] {
				t.Fatal("evaluation output depends on epoch/position")
			}
		}
	}
}

func TestCropPadAndFlip(t *testing.T) {
	src := []float32{1, 2, 3, 4, 5, 6} // (1, 2, 3)
	dst := make([]float32, 6)
	cropPad(dst, src, 1, 2, 3, 0, 0)
	if !slices.Equal(dst, src) {
		t.Fatalf("zero shift changed the image: %v", dst)
	}
	cropPad(dst, src, 1, 2, 3, -1, 1) // top-1 row padded, shifted left by 1
	if want := []float32{0, 0, 0, 2, 3, 0}; !slices.Equal(dst, want) {
		t.Fatalf("shift (-1, 1): %v, want %v", dst, want)
	}
	hflip(dst, 1, 2, 3)
	if want := []float32{0, 0, 0, 0, 3, 2}; !slices.Equal(dst, want) {
		t.Fatalf("flip: %v, want %v", dst, want)
	}
	// Offsets cover [0, 2·pad] uniformly.
	seen := map[[2]int]int{}
	for i := 0; i < 2000; i++ {
		top, left := cropParams(2, newRNG(1, uint64(i)))
		seen[[2]int{top, left}]++
	}
	if len(seen) != 25 {
		t.Fatalf("pad 2 crop offsets: %d distinct, want 25", len(seen))
	}
}

func TestRandomErase(t *testing.T) {
	const c, h, w = 3, 20, 24
	hits := 0
	for i := 0; i < 400; i++ {
		x := make([]float32, c*h*w)
		for k := range x {
			x[k] = 100
		}
		top, left, eh, ew, ok := randomErase(x, c, h, w, 0.5, newRNG(9, uint64(i)))
		changed := 0
		for k, v := range x {
			if v != 100 {
				changed++
				ch, y, xx := k/(h*w), k/w%h, k%w
				if y < top || y >= top+eh || xx < left || xx >= left+ew || ch >= c {
					t.Fatalf("pixel outside the box changed")
				}
			}
		}
		if !ok {
			if changed != 0 {
				t.Fatal("not erased but changed")
			}
			continue
		}
		hits++
		if changed != c*eh*ew {
			t.Fatalf("box %dx%d: %d values changed", eh, ew, changed)
		}
		area := float64(eh*ew) / (h * w)
		// Rounding of the sides widens timm's [0.02, 1/3] area range a little.
		if area < 0.01 || area > 0.45 || float64(eh)/float64(ew) > 1/0.3*1.6 || float64(eh)/float64(ew) < 0.3/1.6 {
			t.Fatalf("box %dx%d: area %.3f aspect %.2f out of range", eh, ew, area, float64(eh)/float64(ew))
		}
	}
	if hits < 160 || hits > 240 {
		t.Errorf("re_prob 0.5 erased %d of 400", hits)
	}
	x := make([]float32, c*h*w)
	if _, _, _, _, ok := randomErase(x, c, h, w, 0, newRNG(1)); ok {
		t.Error("probability 0 erased")
	}
}

func TestRandomEraseNoiseIsStandardNormal(t *testing.T) {
	const c, h, w = 1, 64, 64
	var s, ss float64
	n := 0
	for i := 0; i < 50; i++ {
		x := make([]float32, c*h*w)
		for k := range x {
			x[k] = float32(math.NaN())
		}
		randomErase(x, c, h, w, 1, newRNG(3, uint64(i)))
		for _, v := range x {
			if !math.IsNaN(float64(v)) {
				s += float64(v)
				ss += float64(v) * float64(v)
				n++
			}
		}
	}
	mean := s / float64(n)
	sd := math.Sqrt(ss/float64(n) - mean*mean)
	if math.Abs(mean) > 0.03 || math.Abs(sd-1) > 0.03 {
		t.Errorf("erase noise mean %.3f sd %.3f over %d values", mean, sd, n)
	}
}

func TestPipelineTrainDeterministic(t *testing.T) {
	aug := AugmentConfig{CropPadding: 3, HFlip: 0.5, REProb: 0.5, RandAugment: "rand-m9-mstd0.5", Interpolation: InterpBilinear}
	img := testImage(3, 20, 18, 5)
	p, err := NewPipeline(3, 16, 16, true, 42, aug, []float64{0.5}, []float64{0.25})
	if err != nil {
		t.Fatal(err)
	}
	out := func(epoch, pos int) []float32 {
		x := make([]float32, 3*16*16)
		if err := p.Apply(x, img, epoch, pos); err != nil {
			t.Fatal(err)
		}
		return x
	}
	a, b, c := out(1, 2), out(1, 2), out(1, 3)
	if !slices.Equal(a, b) {
		t.Fatal("same (epoch, pos) gave different outputs")
	}
	if slices.Equal(a, c) {
		t.Fatal("different positions gave identical outputs")
	}
	for _, v := range a {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Fatal("non-finite output")
		}
	}
	// The source image is not modified.
	if !slices.Equal(img.Pix, testImage(3, 20, 18, 5).Pix) {
		t.Fatal("pipeline modified its input")
	}
	// Flip alone: a flipped copy of the eval output, or the eval output itself.
	flipOnly := AugmentConfig{HFlip: 1, Interpolation: InterpBilinear}
	pf, _ := NewPipeline(3, 20, 18, true, 1, flipOnly, []float64{0}, []float64{1})
	pe, _ := NewPipeline(3, 20, 18, false, 1, DefaultAugmentConfig(), []float64{0}, []float64{1})
	xf, xe := make([]float32, 3*20*18), make([]float32, 3*20*18)
	pf.Apply(xf, img, 0, 0)
	pe.Apply(xe, img, 0, 0)
	hflip(xe, 3, 20, 18)
	if !slices.Equal(xf, xe) {
		t.Fatal("hflip 1 is not a mirror image")
	}
}

func TestPipelineErrors(t *testing.T) {
	if _, err := NewPipeline(2, 8, 8, false, 0, DefaultAugmentConfig(), []float64{0.5}, []float64{0.5}); err == nil {
		t.Error("2 channels accepted")
	}
	if _, err := NewPipeline(3, 8, 8, false, 0, DefaultAugmentConfig(), []float64{0.5, 0.5}, []float64{0.5, 0.5}); err == nil {
		t.Error("2 means for 3 channels accepted")
	}
	if _, err := NewPipeline(1, 8, 8, false, 0, DefaultAugmentConfig(), []float64{0.5}, []float64{0}); err == nil {
		t.Error("std 0 accepted")
	}
	p, _ := NewPipeline(1, 8, 8, false, 0, DefaultAugmentConfig(), []float64{0.5}, []float64{0.5})
	if err := p.Apply(make([]float32, 64), testImage(3, 8, 8, 1), 0, 0); err == nil {
		t.Error("3-channel image into a 1-channel pipeline accepted")
	}
	if err := p.Apply(make([]float32, 63), testImage(1, 8, 8, 1), 0, 0); err == nil {
		t.Error("short destination accepted")
	}
}

func TestAntialiasOnlyMattersWhenShrinking(t *testing.T) {
	img := testImage(1, 12, 12, 3)
	x := make([]float32, 144)
	for i, v := range img.Pix {
		x[i] = float32(v) / 255
	}
	up, upAA := Resize(x, 1, 12, 12, 30, 30, false), Resize(x, 1, 12, 12, 30, 30, true)
	for i := range up {
		if math.Abs(float64(up[i]-upAA[i])) > 1e-5 {
			t.Fatalf("enlarging: antialias differs at %d: %v vs %v", i, up[i], upAA[i])
		}
	}
	// Shrinking a constant image keeps it constant either way.
	for i := range x {
		x[i] = 0.25
	}
	for _, aa := range []bool{false, true} {
		for _, v := range Resize(x, 1, 12, 12, 5, 7, aa) {
			if math.Abs(float64(v)-0.25) > 1e-6 {
				t.Fatalf("aa=%v: constant image became %v", aa, v)
			}
		}
	}
}
