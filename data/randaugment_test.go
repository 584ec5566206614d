package data

import (
	"math"
	"strings"
	"testing"
)

func TestParseRandAugment(t *testing.T) {
	ra, err := ParseRandAugment("rand-m9-mstd0.5")
	if err != nil {
		t.Fatal(err)
	}
	if ra.Magnitude != 9 || ra.NumOps != 2 || ra.MagStd != 0.5 || ra.MagMax != 10 || ra.Prob != 0.5 || ra.Increasing {
		t.Fatalf("rand-m9-mstd0.5 parsed to %+v", ra)
	}
	want := "AutoContrast,Equalize,Invert,Rotate,Posterize,Solarize,SolarizeAdd,Color,Contrast,Brightness,Sharpness,ShearX,ShearY,TranslateXRel,TranslateYRel"
	if got := strings.Join(ra.OpNames(), ","); got != want {
		t.Fatalf("ops %s, want timm's _RAND_TRANSFORMS", got)
	}
	ra, err = ParseRandAugment("rand-m7-n3-mstd101-mmax12-p0.8-inc1")
	if err != nil {
		t.Fatal(err)
	}
	if ra.Magnitude != 7 || ra.NumOps != 3 || !math.IsInf(ra.MagStd, 1) || ra.MagMax != 12 || ra.Prob != 0.8 || !ra.Increasing {
		t.Fatalf("parsed to %+v", ra)
	}
	if !strings.Contains(strings.Join(ra.OpNames(), ","), "PosterizeIncreasing") {
		t.Fatal("inc1 did not select the increasing ops")
	}
	if ra, err := ParseRandAugment(""); ra != nil || err != nil {
		t.Fatal("empty spec should be off")
	}
	for _, bad := range []string{"rnd-m9", "rand-m9.5", "rand-x3", "rand-n0", "rand-p1.5", "rand-w0", "rand-m", "rand-mstd-1"} {
		if _, err := ParseRandAugment(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestRandAugmentLevels(t *testing.T) {
	r := newRNG(1)
	abs := math.Abs
	cases := []struct {
		name      string
		got, want float64
	}{
		{"rotate m9", abs(rotateLevel(9, r)), 27},
		{"shear m9", abs(shearLevel(9, r)), 0.27},
		{"translate m10", abs(translateRelLevel(10, r)), 0.45},
		{"enhance m9", enhanceLevel(9, r), 1.72},
		{"enhance inc m9", abs(enhanceIncreasingLevel(9, r) - 1), 0.81},
		{"posterize m9", posterizeLevel(9, r), 3},
		{"posterize inc m9", posterizeIncreasingLevel(9, r), 1},
		{"solarize m9", solarizeLevel(9, r), 230},
		{"solarize inc m9", solarizeIncreasingLevel(9, r), 26},
		{"solarize add m9", solarizeAddLevel(9, r), 99},
	}
	for _, c := range cases {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
	// Signs are random, about half negative.
	neg := 0
	for i := 0; i < 1000; i++ {
		if rotateLevel(5, r) < 0 {
			neg++
		}
	}
	if neg < 430 || neg > 570 {
		t.Errorf("rotate negated %d of 1000 times", neg)
	}
}

// recordOps replaces the op set by one op recording the magnitudes it gets.
func recordOps(ra *RandAugment) *[]float64 {
	var mags []float64
	ra.ops = []raOp{{name: "rec", level: func(m float64, _ *rng) float64 { return m },
		apply: func(_ Image, a float64, _ []uint8) { mags = append(mags, a) }}}
	return &mags
}

func TestRandAugmentMagnitudeAndProb(t *testing.T) {
	img := testImage(1, 4, 4, 1)
	stats := func(spec string) (applied float64, mean, sd, lo, hi float64) {
		ra, err := ParseRandAugment(spec)
		if err != nil {
			t.Fatal(err)
		}
		mags := recordOps(ra)
		const draws = 4000
		for i := 0; i < draws; i++ {
			ra.apply(img, newRNG(5, uint64(i)), nil)
		}
		lo, hi = math.Inf(1), math.Inf(-1)
		var s, ss float64
		for _, m := range *mags {
			s += m
			ss += m * m
			lo, hi = math.Min(lo, m), math.Max(hi, m)
		}
		n := float64(len(*mags))
		return n / (draws * float64(ra.NumOps)), s / n, math.Sqrt(ss/n - (s/n)*(s/n)), lo, hi
	}
	applied, mean, sd, lo, hi := stats("rand-m9-mstd0.5")
	if math.Abs(applied-0.5) > 0.03 {
		t.Errorf("p 0.5: applied fraction %.3f", applied)
	}
	if math.Abs(mean-8.97) > 0.05 || sd < 0.4 || sd > 0.5 || hi > 10 || lo < 7 {
		t.Errorf("m9 mstd0.5: magnitudes mean %.3f sd %.3f range [%.2f, %.2f] (clipped at 10)", mean, sd, lo, hi)
	}
	applied, mean, sd, lo, hi = stats("rand-m9-mstd101-p1-n3")
	if applied != 1 || math.Abs(mean-4.5) > 0.1 || math.Abs(sd-9/math.Sqrt(12)) > 0.1 || lo < 0 || hi > 9 {
		t.Errorf("mstd101: applied %.2f, mean %.3f sd %.3f range [%.2f, %.2f], want uniform on [0,9]", applied, mean, sd, lo, hi)
	}
	_, mean, sd, _, _ = stats("rand-m30-mmax20-p1")
	if mean != 20 || sd != 0 {
		t.Errorf("m30 mmax20: mean %v sd %v, want the cap 20", mean, sd)
	}
}

func TestRandAugmentRunsEveryOp(t *testing.T) {
	for _, inc := range []bool{false, true} {
		for _, op := range randAugmentOps(inc) {
			for _, c := range []int{1, 3} {
				img := testImage(c, 9, 11, 2)
				arg := 0.0
				if op.level != nil {
					arg = op.level(9, newRNG(3))
				}
				op.apply(img, arg, []uint8{128, 120, 110})
				if len(img.Pix) != c*99 {
					t.Fatalf("%s changed the image size", op.name)
				}
			}
		}
	}
}
