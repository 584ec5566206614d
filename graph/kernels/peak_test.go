package kernels

import (
	"fmt"
	"testing"
)

// TestPeaks: each peak is measured where its loop runs (a positive rate)
// and refused where it does not: on the Go kernels, and with no thread.
func TestPeaks(t *testing.T) {
	peaks := []struct {
		name string
		f    func(int) (float64, bool)
		// on says whether the loop runs on this CPU with its kernels as
		// they are.
		on bool
	}{
		{"FP32Peak", FP32Peak, ISA() != "go"},
		{"Int8Peak", Int8Peak, Int8ISA() != "go"},
		{"Int8SaturatingPeak", Int8SaturatingPeak, int8SaturatingPeakLoop().run != nil},
	}
	check := func(t *testing.T, name string, g float64, ok, want bool) {
		t.Helper()
		if ok != want || (ok && !(g > 0)) || (!ok && g != 0) {
			t.Errorf("%s = %v, %v; want ok %v and a positive rate when ok", name, g, ok, want)
		}
	}
	for _, p := range peaks {
		g, ok := p.f(1)
		t.Logf("%s(1) on %s: %.1f, %v", p.name, ISA(), g, ok)
		check(t, p.name+"(1)", g, ok, p.on)
		g, ok = p.f(0)
		check(t, p.name+"(0)", g, ok, false)
	}
	if ISA() == "avx2" && Int8ISA() != "avx2" {
		t.Errorf("ISA avx2 with int8 tile %s", Int8ISA())
	}
	saved := hasAVX2
	hasAVX2 = false
	defer func() { hasAVX2 = saved }()
	if hasAVX512 {
		return // the AVX-512 kernels do not look at hasAVX2
	}
	for _, p := range peaks {
		g, ok := p.f(1)
		check(t, p.name+"(1) on the Go kernels", g, ok, false)
	}
}

// BenchmarkPeaks reports each peak on 1 and 2 threads, in billions of
// operations a second (2 a multiply-add): the ceilings the serving bench
// sets the products against.
// `go test -run '^$' -bench Peaks ./graph/kernels`.
func BenchmarkPeaks(b *testing.B) {
	for _, p := range []struct {
		name string
		f    func(int) (float64, bool)
	}{{"fp32", FP32Peak}, {"int8", Int8Peak}, {"int8saturating", Int8SaturatingPeak}} {
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/%d", p.name, threads), func(b *testing.B) {
				var g float64
				var ok bool
				for b.Loop() {
					g, ok = p.f(threads)
				}
				if !ok {
					b.Skip("no such loop here")
				}
				b.ReportMetric(g, "Gop/s")
			})
		}
	}
}
