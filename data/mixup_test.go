package data

import (
	"math"
	"slices"
	"testing"
)

// constBatch returns n images of c×h×w where image i is filled with i+1.
func constBatch(n, c, h, w int) ([]float32, []int) {
	x := make([]float32, n*c*h*w)
	labels := make([]int, n)
	for i := 0; i < n; i++ {
		for k := 0; k < c*h*w; k++ {
			x[i*c*h*w+k] = float32(i + 1)
		}
		labels[i] = i % 5
	}
	return x, labels
}

func mixCfg(mut func(*MixupConfig)) MixupConfig {
	c := DefaultMixupConfig()
	mut(&c)
	return c
}

func checkRowsSumToOne(t *testing.T, targets []float32, k int) {
	t.Helper()
	for i := 0; i < len(targets)/k; i++ {
		s := 0.0
		for _, v := range targets[i*k : (i+1)*k] {
			if v < 0 {
				t.Fatalf("row %d has negative target %v", i, v)
			}
			s += float64(v)
		}
		if math.Abs(s-1) > 1e-5 {
			t.Fatalf("row %d sums to %v", i, s)
		}
	}
}

func TestMixupRowsSumToOne(t *testing.T) {
	const n, c, h, w, k = 8, 2, 6, 7, 5
	for _, mode := range []MixMode{MixBatch, MixPair, MixElem} {
		for _, cfg := range []MixupConfig{
			mixCfg(func(c *MixupConfig) { c.MixupAlpha, c.Mode = 0.8, mode }),
			mixCfg(func(c *MixupConfig) { c.CutmixAlpha, c.Mode, c.LabelSmoothing = 1, mode, 0.1 }),
			mixCfg(func(c *MixupConfig) { c.MixupAlpha, c.CutmixAlpha, c.Mode, c.LabelSmoothing = 0.8, 1, mode, 0.2 }),
			mixCfg(func(c *MixupConfig) { c.CutmixMinMax, c.Mode = []float64{0.2, 0.8}, mode; c.CorrectLam.Set(false) }),
			mixCfg(func(c *MixupConfig) { c.LabelSmoothing, c.Mode = 0.3, mode }),
		} {
			m, err := NewMixup(cfg, k)
			if err != nil {
				t.Fatal(err)
			}
			for s := uint64(0); s < 20; s++ {
				x, labels := constBatch(n, c, h, w)
				targets := make([]float32, n*k)
				if _, err := m.Apply(x, labels, c, h, w, targets, s); err != nil {
					t.Fatal(err)
				}
				checkRowsSumToOne(t, targets, k)
			}
		}
	}
}

func TestMixupOffLeavesBatchAndSmoothsLabels(t *testing.T) {
	const n, k = 6, 5
	m, _ := NewMixup(mixCfg(func(c *MixupConfig) { c.LabelSmoothing = 0.1 }), k)
	x, labels := constBatch(n, 1, 3, 3)
	orig := append([]float32(nil), x...)
	targets := make([]float32, n*k)
	lam, err := m.Apply(x, labels, 1, 3, 3, targets, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(x, orig) {
		t.Fatal("alpha 0 changed the batch")
	}
	want := make([]float32, n*k)
	SmoothOneHot(want, labels, k, 0.1)
	if !slices.Equal(targets, want) {
		t.Fatalf("targets %v, want smoothed one-hot %v", targets, want)
	}
	if want[labels[0]] != float32(1-0.1+0.02) || want[(labels[0]+1)%k] != float32(0.02) {
		t.Fatalf("smoothing values %v", want[:k])
	}
	for _, l := range lam {
		if l != 1 {
			t.Fatal("lam != 1 without mixing")
		}
	}
	// prob 0 also leaves the batch alone.
	m, _ = NewMixup(mixCfg(func(c *MixupConfig) { c.MixupAlpha, c.CutmixAlpha = 1, 1; c.Prob.Set(0) }), k)
	for _, mode := range []MixMode{MixBatch, MixElem, MixPair} {
		m.cfg.Mode = mode
		m.Apply(x, labels, 1, 3, 3, targets, 3)
		if !slices.Equal(x, orig) {
			t.Fatalf("%s: prob 0 changed the batch", mode)
		}
	}
}

// With CutMix and correct_lam, each row's lam is exactly the fraction of its
// own pixels kept.
func TestCutMixLamIsKeptArea(t *testing.T) {
	const n, c, h, w, k = 8, 3, 9, 11, 5
	for _, mode := range []MixMode{MixBatch, MixPair, MixElem} {
		for _, mm := range [][]float64{nil, {0.3, 0.7}} {
			m, _ := NewMixup(mixCfg(func(cf *MixupConfig) { cf.CutmixAlpha, cf.Mode, cf.CutmixMinMax = 1, mode, mm }), k)
			boxes := 0
			for s := uint64(0); s < 30; s++ {
				x, labels := constBatch(n, c, h, w)
				targets := make([]float32, n*k)
				lam, err := m.Apply(x, labels, c, h, w, targets, s)
				if err != nil {
					t.Fatal(err)
				}
				for i := 0; i < n; i++ {
					own, other := 0, 0
					for _, v := range x[i*c*h*w : (i+1)*c*h*w] {
						switch v {
						case float32(i + 1):
							own++
						case float32(n - i):
							other++
						default:
							t.Fatalf("%s: row %d holds %v, from neither source", mode, i, v)
						}
					}
					if got := float64(own) / float64(c*h*w); math.Abs(got-lam[i]) > 1e-12 {
						t.Fatalf("%s minmax %v: row %d keeps %.4f of its pixels, lam %.4f", mode, mm, i, got, lam[i])
					}
					if other > 0 {
						boxes++
					}
					// Targets mix the two labels with the same lam.
					li, lj := labels[i], labels[n-1-i]
					if li != lj && math.Abs(float64(targets[i*k+li])-lam[i]) > 1e-6 {
						t.Fatalf("row %d target %v, lam %v", i, targets[i*k+li], lam[i])
					}
				}
			}
			if boxes == 0 {
				t.Fatalf("%s: CutMix never pasted a box", mode)
			}
		}
	}
}

// The mean (and variance) of mixup's lam over many batches match Beta(α, α).
func TestMixupLamMatchesBeta(t *testing.T) {
	for _, alpha := range []float64{0.2, 0.8, 2} {
		m, _ := NewMixup(mixCfg(func(c *MixupConfig) { c.MixupAlpha = alpha }), 3)
		const draws = 5000
		var s, ss float64
		for d := 0; d < draws; d++ {
			x, labels := constBatch(2, 1, 1, 1)
			lam, _ := m.Apply(x, labels[:2], 1, 1, 1, make([]float32, 6), uint64(d))
			// The pixels really are mixed with lam.
			if want := lam[0]*1 + (1-lam[0])*2; math.Abs(float64(x[0])-want) > 1e-5 {
				t.Fatalf("mixed pixel %v, want %v", x[0], want)
			}
			s += lam[0]
			ss += lam[0] * lam[0]
		}
		mean := s / draws
		variance := ss/draws - mean*mean
		wantVar := 1 / (4 * (2*alpha + 1))
		if math.Abs(mean-0.5) > 0.015 || math.Abs(variance-wantVar)/wantVar > 0.08 {
			t.Errorf("alpha %v: lam mean %.4f (want 0.5), variance %.4f (want %.4f)", alpha, mean, variance, wantVar)
		}
	}
}

func TestMixupSwitchProbAndDeterminism(t *testing.T) {
	m, _ := NewMixup(mixCfg(func(c *MixupConfig) { c.MixupAlpha, c.CutmixAlpha = 1, 1; c.SwitchProb.Set(0.3) }), 5)
	cut := 0
	const draws = 2000
	for d := 0; d < draws; d++ {
		x, labels := constBatch(2, 1, 8, 8)
		m.Apply(x, labels, 1, 8, 8, make([]float32, 10), uint64(d))
		if x[0] == 1 || x[0] == 2 { // CutMix keeps pure pixels; mixup blends them all
			allPure := true
			for _, v := range x[:64] {
				if v != 1 && v != 2 {
					allPure = false
				}
			}
			if allPure {
				cut++
			}
		}
	}
	if f := float64(cut) / draws; math.Abs(f-0.3) > 0.04 {
		t.Errorf("switch_prob 0.3: CutMix chosen %.3f of the time", f)
	}
	// The same key gives the same batch.
	a, la := constBatch(8, 2, 5, 5)
	b, lb := constBatch(8, 2, 5, 5)
	ta, tb := make([]float32, 40), make([]float32, 40)
	m.Apply(a, la, 2, 5, 5, ta, 77)
	m.Apply(b, lb, 2, 5, 5, tb, 77)
	if !slices.Equal(a, b) || !slices.Equal(ta, tb) {
		t.Fatal("same key, different batches")
	}
}

func TestMixupErrors(t *testing.T) {
	m, _ := NewMixup(mixCfg(func(c *MixupConfig) { c.MixupAlpha = 1 }), 3)
	x, labels := constBatch(2, 1, 2, 2)
	if _, err := m.Apply(x, []int{0, 3}, 1, 2, 2, make([]float32, 6), 0); err == nil {
		t.Error("label 3 of 3 classes accepted")
	}
	if _, err := m.Apply(x[:7], labels, 1, 2, 2, make([]float32, 6), 0); err == nil {
		t.Error("short batch accepted")
	}
	if _, err := NewMixup(mixCfg(func(c *MixupConfig) { c.Prob.Set(2) }), 3); err == nil {
		t.Error("prob 2 accepted")
	}
	mm, _ := NewMixup(mixCfg(func(c *MixupConfig) { c.CutmixMinMax = []float64{0.5, 0.6} }), 3)
	if err := mm.checkSize(4, 4); err == nil {
		t.Error("cutmix_minmax with no box size for a 4-pixel side accepted")
	}
}
