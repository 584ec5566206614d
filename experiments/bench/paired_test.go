package main

import (
	"errors"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// pairedSteps warms every count up, then takes one step at every count per
// round, the order reversed in odd rounds, and files each step's times
// under its count.
func TestPairedStepsTakeTurns(t *testing.T) {
	var calls []int
	res, err := pairedSteps([]int{1, 2, 4}, 1, 3, func(threads int) (float64, float64, error) {
		calls = append(calls, threads)
		return float64(100*len(calls) + threads), float64(threads), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{1, 2, 4, 1, 2, 4, 4, 2, 1, 1, 2, 4}; !slices.Equal(calls, want) {
		t.Errorf("steps taken at %v threads, want %v", calls, want)
	}
	// call k (from 1) returned 100·k + threads; the warm-up's three are not kept
	want := [][]float64{{401, 901, 1001}, {502, 802, 1102}, {604, 704, 1204}}
	for i := range want {
		if !slices.Equal(res.StepMs[i], want[i]) || len(res.CPUMs[i]) != 3 || res.CPUMs[i][0] != float64(res.Counts[i]) {
			t.Errorf("count %d: steps %v, cpu %v; want steps %v", res.Counts[i], res.StepMs[i], res.CPUMs[i], want[i])
		}
	}
	boom := errors.New("boom")
	if _, err := pairedSteps([]int{1, 2}, 0, 2, func(int) (float64, float64, error) { return 0, 0, boom }); !errors.Is(err, boom) {
		t.Errorf("a failing step: %v", err)
	}
}

// The speedup is the median of the steps' own ratios, not a ratio of
// medians or minima: one slow 1-thread step and one slow 2-thread step
// in different pairs do not move it.
func TestPairedTable(t *testing.T) {
	r := mergePaired(pairedResult{}, pairedResult{Counts: []int{1, 2},
		StepMs: [][]float64{{200, 300, 190}, {100, 110, 150}}, CPUMs: [][]float64{{200, 300, 190}, {190, 210, 280}}})
	r = mergePaired(r, pairedResult{Counts: []int{1, 2}, StepMs: [][]float64{{210}, {105}}, CPUMs: [][]float64{{210}, {200}}})
	ratios := r.pairRatios(1) // 2, 300/110, 190/150, 2
	if want := []float64{190.0 / 150, 2, 2, 300.0 / 110}; !slices.Equal(ratios, want) {
		t.Errorf("ratios %v, want %v", ratios, want)
	}
	if q1, q3 := quartiles(ratios); q1 != 190.0/150 || q3 != 2 {
		t.Errorf("quartiles %v, %v of %v", q1, q3, ratios)
	}
	var b strings.Builder
	writePaired(&b, benchConfigs["tiny"], r)
	for _, want := range []string{"| 1 | 4 | 205.00 | 190.00 | 1 |", "| 2 | 4 | 107.50 | 100.00 | 2.00× | 1.27–2.00× | 1.89 | 0.0 % |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	if q1, q3 := quartiles([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9}); q1 != 3 || q3 != 7 {
		t.Errorf("quartiles of 1…9: %v, %v", q1, q3)
	}
	b.Reset()
	r.StepMs[1] = []float64{100, 100, 100, 100}
	r.StepMs[0] = []float64{185, 185, 185, 185}
	writePaired(&b, benchConfigs["tiny"], r)
	if !strings.Contains(b.String(), "| 1.85× | 1.85–1.85× | 2.20 | 8.1 % |") { // s = 2/1.85 − 1; busy 880 ms CPU over 400
		t.Errorf("a 1.85× speedup:\n%s", b.String())
	}
}

// A paired child trains a small model at two counts, times every step, and
// leaves GOMAXPROCS as it found it.
func TestMeasurePaired(t *testing.T) {
	c := benchConfigs["tiny"].model()
	c.EmbedDim, c.Depth, c.NumHeads = 16, 1, 2
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	res, err := measurePaired(c, job{Steps: 2, Batch: 16, Threads: 2, Warmup: 1, Counts: []int{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	if got := runtime.GOMAXPROCS(0); got != 3 {
		t.Errorf("GOMAXPROCS left at %d, want 3", got)
	}
	for i := range res.Counts {
		if len(res.StepMs[i]) != 2 || slices.Min(res.StepMs[i]) <= 0 {
			t.Errorf("count %d: steps %v", res.Counts[i], res.StepMs[i])
		}
	}
}
