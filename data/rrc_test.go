package data

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"testing"

	"github.com/vitgo/vit/internal/cfgerr"
)

// rrcGolden mirrors data/testdata/rrc_golden.json, made by
// experiments/goldens/rrc_golden.py with torchvision.
type rrcGolden struct {
	Torchvision string `json:"torchvision"`
	Cases       []struct {
		C, H, W   int
		Box       [4]int
		OH, OW    int
		Antialias bool
		Pix       []uint8
		Y         []float64
	} `json:"cases"`
}

// TestRandomResizedCropMatchesTorchvision crops each golden image to its
// box and resizes it to the output size as the pipeline does, and compares
// with torchvision's resized_crop of the same box within the 1e-5 that our
// resize is held to against F.interpolate (TestResizeMatchesTorch).
func TestRandomResizedCropMatchesTorchvision(t *testing.T) {
	b, err := os.ReadFile("testdata/rrc_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g rrcGolden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Cases) == 0 {
		t.Fatal("no cases")
	}
	overall := 0.0
	defer func() { t.Logf("max |diff| vs torchvision %s over %d cases: %g", g.Torchvision, len(g.Cases), overall) }()
	for _, c := range g.Cases {
		img := Image{C: c.C, H: c.H, W: c.W, Pix: c.Pix}
		crop, _ := cropImage(img, cropBox{c.Box[0], c.Box[1], c.Box[2], c.Box[3]}, nil)
		interp := InterpBilinear
		if c.Antialias {
			interp = InterpBilinearAA
		}
		p, err := NewPipeline(c.C, c.OH, c.OW, false, 0, AugmentConfig{Interpolation: interp}, []float64{0}, []float64{1})
		if err != nil {
			t.Fatal(err)
		}
		var s scratch
		s.rs.aa = c.Antialias
		y := p.toFloatResized(crop, &s)
		worst := 0.0
		for i := range y {
			worst = math.Max(worst, math.Abs(float64(y[i])-c.Y[i]))
		}
		overall = math.Max(overall, worst)
		if worst > 1e-5 {
			t.Errorf("%dx%dx%d box %v → %dx%d aa=%v: max |diff| vs torchvision %s %g > 1e-5", c.C, c.H, c.W, c.Box, c.OH, c.OW, c.Antialias, g.Torchvision, worst)
		}
	}
}

// TestRRCBoxBounds draws many boxes and checks torchvision's contract: every
// box lies in the image; on a large image (where rounding is small) its
// share of the area is in the scale range and its aspect ratio in the
// ratio range, up to the rounding to whole pixels; the ranges are covered,
// and boxes touch every edge.
func TestRRCBoxBounds(t *testing.T) {
	const h, w, n = 224, 200, 20000
	scale, ratio := [2]float64{0.08, 1}, [2]float64{3.0 / 4, 4.0 / 3}
	minS, maxS, minR, maxR := 2.0, 0.0, 10.0, 0.0
	var top0, left0, bottom, right bool
	for i := range n {
		b := rrcBox(h, w, scale, ratio, newRNG(9, uint64(i), streamRRC))
		if b.h <= 0 || b.w <= 0 || b.top < 0 || b.left < 0 || b.top+b.h > h || b.left+b.w > w {
			t.Fatalf("box %+v outside the %dx%d image", b, h, w)
		}
		s, r := float64(b.h*b.w)/(h*w), float64(b.w)/float64(b.h)
		minS, maxS, minR, maxR = min(minS, s), max(maxS, s), min(minR, r), max(maxR, r)
		top0, left0 = top0 || b.top == 0, left0 || b.left == 0
		bottom, right = bottom || b.top+b.h == h, right || b.left+b.w == w
	}
	if minS < 0.08*0.97 || maxS > 1 || minS > 0.085 || maxS < 0.95 {
		t.Errorf("area shares in [%v, %v], want within and covering [0.08, 1]", minS, maxS)
	}
	if minR < 0.75*0.97 || maxR > 4.0/3*1.03 || minR > 0.77 || maxR < 1.3 {
		t.Errorf("aspect ratios in [%v, %v], want within and covering [0.75, 1.333]", minR, maxR)
	}
	if !top0 || !left0 || !bottom || !right {
		t.Errorf("boxes touched top %v, left %v, bottom %v, right %v; want every edge", top0, left0, bottom, right)
	}
}

// TestRRCFallback: when no drawn box fits, the central crop clamped to the
// ratio range (torchvision's fallback).
func TestRRCFallback(t *testing.T) {
	def := [2]float64{3.0 / 4, 4.0 / 3}
	for _, tc := range []struct {
		h, w         int
		scale, ratio [2]float64
		want         cropBox
	}{
		{4, 400, [2]float64{0.08, 1}, def, cropBox{0, 197, 4, 5}}, // too wide: h·4/3 = 5.3 → 5
		{400, 4, [2]float64{0.08, 1}, def, cropBox{197, 0, 5, 4}}, // too tall: w/(3/4) = 5.3 → 5
		{10, 10, [2]float64{1, 1}, [2]float64{2, 3}, cropBox{2, 0, 5, 10}},
		{10, 10, [2]float64{1, 1}, [2]float64{0.2, 0.5}, cropBox{0, 2, 10, 5}},
	} {
		for i := range 50 {
			if got := rrcBox(tc.h, tc.w, tc.scale, tc.ratio, newRNG(1, uint64(i))); got != tc.want {
				t.Fatalf("%dx%d scale %v ratio %v: box %+v, want the fallback %+v", tc.h, tc.w, tc.scale, tc.ratio, got, tc.want)
			}
		}
	}
	// In the ratio range: the whole image.
	if got := rrcFallback(10, 12, def); got != (cropBox{0, 0, 10, 12}) {
		t.Errorf("fallback of 10x12: %+v, want the whole image", got)
	}
}

// TestPipelineRandomResizedCrop: with random_resized_crop on, a training
// sample is the box drawn from its (seed, epoch, position) stream, resized
// (by default with bilinear_aa, timm's PIL resize) and normalized; the same
// sample gives the same output; evaluation and other positions do not crop
// alike.
func TestPipelineRandomResizedCrop(t *testing.T) {
	const c, h, w, oh, ow = 3, 30, 40, 12, 12
	img := Image{C: c, H: h, W: w, Pix: make([]uint8, c*h*w)}
	r := newRNG(5)
	for i := range img.Pix {
		img.Pix[i] = uint8(r.intn(256))
	}
	aug := AugmentConfig{RandomResizedCrop: true}
	p, err := NewPipeline(c, oh, ow, true, 7, aug, []float64{0}, []float64{1})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := NewPipeline(c, oh, ow, false, 7, AugmentConfig{}, []float64{0}, []float64{1})
	if err != nil {
		t.Fatal(err)
	}
	apply := func(p *Pipeline, epoch, pos int) []float32 {
		out := make([]float32, c*oh*ow)
		if err := p.Apply(out, img, epoch, pos); err != nil {
			t.Fatal(err)
		}
		return out
	}
	same := func(a, b []float32) bool {
		for i := range a {
			if a[i] != b[i] {
				return false
			}
		}
		return true
	}
	for pos := range 4 {
		box := rrcBox(h, w, [2]float64{0.08, 1}, [2]float64{0.75, 4.0 / 3}, newRNG(7, 2, uint64(pos), streamRRC))
		crop, _ := cropImage(img, box, nil)
		var s scratch
		s.rs.aa = true // the default interpolation with random_resized_crop
		want := ev.toFloatResized(crop, &s)
		if got := apply(p, 2, pos); !same(got, want) {
			t.Errorf("pos %d: output is not the resized box %+v", pos, box)
		}
		if !same(apply(p, 2, pos), apply(p, 2, pos)) {
			t.Errorf("pos %d: two applications differ", pos)
		}
	}
	if same(apply(p, 2, 0), apply(ev, 2, 0)) {
		t.Error("training output equals the uncropped evaluation output")
	}

	for _, tc := range []struct {
		aug AugmentConfig
		key string
	}{
		{AugmentConfig{RRCScale: []float64{0.5, 0.1}}, "augment.rrc_scale"},
		{AugmentConfig{RRCScale: []float64{0, 1}}, "augment.rrc_scale"},
		{AugmentConfig{RRCRatio: []float64{1}}, "augment.rrc_ratio"},
		{AugmentConfig{RandomResizedCrop: true, CropPadding: 4}, "augment.random_resized_crop"},
	} {
		var ce *cfgerr.Error
		if err := tc.aug.Validate(); !errors.As(err, &ce) || ce.Key != tc.key {
			t.Errorf("%+v: %v, want an error for %s", tc.aug, err, tc.key)
		}
	}
}

// rrcExtremes are aspect-ratio and scale ranges far outside any image's,
// and image sizes down to 1×1, for TestRRCExtremeRangesNeverPanic.
var (
	rrcExtremeRatios = [][2]float64{
		{60, 60}, {0.01, 0.01}, {1e-300, 1e-300}, {1e300, 1e300}, {5e-324, 5e-324},
		{math.MaxFloat64, math.MaxFloat64}, {1e-9, 1e9}, {3.0 / 4, 4.0 / 3}, {1, 1},
	}
	rrcExtremeScales = [][2]float64{{1e-300, 1e-300}, {5e-324, 1}, {1, 1}, {0.08, 1}}
	rrcSizes         = [][2]int{{1, 1}, {1, 500}, {500, 1}, {2, 3}, {28, 28}, {7, 300}}
)

// checkRRCApply crops an h×w image with rrcBox at the given ranges and runs
// the training pipeline's crop and resize on it: the box must be at least
// 1×1 and inside the image, and nothing may panic (a fallback of 0 pixels
// used to panic in the resize).
func checkRRCApply(t *testing.T, p *Pipeline, h, w int, scale, ratio [2]float64, seed uint64) {
	t.Helper()
	b := rrcBox(h, w, scale, ratio, newRNG(seed, streamRRC))
	if b.h < 1 || b.w < 1 || b.top < 0 || b.left < 0 || b.top+b.h > h || b.left+b.w > w {
		t.Fatalf("%dx%d scale %v ratio %v: box %+v is not a non-empty box inside the image", h, w, scale, ratio, b)
	}
	img := Image{C: 1, H: h, W: w, Pix: make([]uint8, h*w)}
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 37)
	}
	p.rrcScale, p.rrcRatio = scale, ratio
	out := make([]float32, p.C*p.H*p.W)
	if err := p.Apply(out, img, 0, int(seed)); err != nil {
		t.Fatalf("%dx%d scale %v ratio %v: %v", h, w, scale, ratio, err)
	}
	for i, v := range out {
		if math.IsNaN(float64(v)) || v < 0 || v > 1 {
			t.Fatalf("%dx%d scale %v ratio %v: output %d is %v, not a pixel of the image", h, w, scale, ratio, i, v)
		}
	}
}

// TestRRCExtremeRangesNeverPanic: RandomResizedCrop cannot panic or leave
// the image, whatever its ranges and the image's size (1×1 included): the
// fallback crop is clamped to [1, the image's side].
func TestRRCExtremeRangesNeverPanic(t *testing.T) {
	p, err := NewPipeline(1, 28, 28, true, 3, AugmentConfig{RandomResizedCrop: true}, []float64{0}, []float64{1})
	if err != nil {
		t.Fatal(err)
	}
	for _, sz := range rrcSizes {
		for _, ratio := range rrcExtremeRatios {
			for _, scale := range rrcExtremeScales {
				for seed := range uint64(3) {
					checkRRCApply(t, p, sz[0], sz[1], scale, ratio, seed)
				}
			}
		}
	}
	// The cases: the fallback of a 28×28 image is one pixel high
	// (28/60 rounds to 0) or wide (28·0.01 rounds to 0), not empty.
	if got := rrcFallback(28, 28, [2]float64{60, 60}); got != (cropBox{13, 0, 1, 28}) {
		t.Errorf("ratio [60, 60] at 28x28: fallback %+v, want one row", got)
	}
	if got := rrcFallback(28, 28, [2]float64{0.01, 0.01}); got != (cropBox{0, 13, 28, 1}) {
		t.Errorf("ratio [0.01, 0.01] at 28x28: fallback %+v, want one column", got)
	}
}

// FuzzRRCBox: any valid-looking ranges on any image size give a non-empty
// box inside the image, and the pipeline crops and resizes it.
func FuzzRRCBox(f *testing.F) {
	f.Add(28, 28, 0.08, 1.0, 60.0, 60.0, uint64(0))
	f.Add(28, 28, 0.08, 1.0, 0.01, 0.01, uint64(1))
	f.Add(1, 1, 1e-300, 1e-300, 1e300, 1e300, uint64(2))
	f.Add(1, 400, 1.0, 1.0, 5e-324, 5e-324, uint64(3))
	p, err := NewPipeline(1, 8, 8, true, 3, AugmentConfig{RandomResizedCrop: true}, []float64{0}, []float64{1})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, h, w int, s0, s1, r0, r1 float64, seed uint64) {
		if h < 1 || w < 1 || h > 512 || w > 512 {
			return
		}
		// What AugmentConfig.Validate lets through.
		if !(s0 > 0 && s0 <= s1 && s1 <= 1) || !(r0 > 0 && r0 <= r1 && !math.IsInf(r1, 0)) {
			return
		}
		checkRRCApply(t, p, h, w, [2]float64{s0, s1}, [2]float64{r0, r1}, seed)
	})
}

// TestRRCRatioRefusedAtImageSize: an rrc_ratio that leaves a crop under one
// pixel at the model's image size is refused naming augment.rrc_ratio, by
// the training pipeline and by ValidateAt (train's config validation, and
// so -dry-run); one that leaves a pixel is accepted, and so is any ratio
// with random_resized_crop off.
func TestRRCRatioRefusedAtImageSize(t *testing.T) {
	for _, tc := range []struct {
		h, w   int
		ratio  []float64
		rrc    bool
		refuse bool
	}{
		{28, 28, []float64{60, 60}, true, true},
		{28, 28, []float64{0.01, 0.01}, true, true},
		{28, 28, []float64{56, 56}, true, true},      // 28/56 = 0.5 rounds to 0
		{28, 28, []float64{55.9, 55.9}, true, false}, // rounds to 1
		{28, 28, []float64{1.0 / 56, 1.0 / 56}, true, true},
		{28, 28, []float64{1.0 / 55, 1.0 / 55}, true, false},
		{224, 224, []float64{60, 60}, true, false},
		{28, 28, []float64{60, 60}, false, false},
		{28, 28, nil, true, false},
	} {
		aug := AugmentConfig{RandomResizedCrop: tc.rrc, RRCRatio: tc.ratio}
		if err := aug.Validate(); err != nil {
			t.Fatalf("%v: Validate: %v", tc.ratio, err)
		}
		err := aug.ValidateAt(tc.h, tc.w)
		_, perr := NewPipeline(1, tc.h, tc.w, true, 0, aug, []float64{0}, []float64{1})
		for _, e := range []error{err, perr} {
			var ce *cfgerr.Error
			if got := errors.As(e, &ce) && ce.Key == "augment.rrc_ratio"; got != tc.refuse {
				t.Errorf("%dx%d rrc %v ratio %v: %v, want refused %v", tc.h, tc.w, tc.rrc, tc.ratio, e, tc.refuse)
			}
		}
	}
}

// TestRRCDefaultInterpolation: with random_resized_crop on and no
// interpolation, the resize is bilinear_aa (timm resizes PIL images, which
// antialias); without it, bilinear; an explicit one is kept.
func TestRRCDefaultInterpolation(t *testing.T) {
	for _, tc := range []struct {
		aug  AugmentConfig
		want Interpolation
	}{
		{AugmentConfig{RandomResizedCrop: true}, InterpBilinearAA},
		{AugmentConfig{}, InterpBilinear},
		{AugmentConfig{RandomResizedCrop: true, Interpolation: InterpBilinear}, InterpBilinear},
		{AugmentConfig{Interpolation: InterpBilinearAA}, InterpBilinearAA},
	} {
		if got := tc.aug.WithDefaults().Interpolation; got != tc.want {
			t.Errorf("%+v: interpolation %q, want %q", tc.aug, got, tc.want)
		}
	}
	if got := DefaultAugmentConfig().Interpolation; got != InterpBilinear {
		t.Errorf("DefaultAugmentConfig (random_resized_crop off): %q, want bilinear", got)
	}
}
