package main

import (
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/vitgo/vit/layers"
)

// modePaired is the child mode of the paired sweep (-paired): → pairedResult.
const modePaired = "paired"

// pairedSettle is how long a paired child sleeps after changing
// GOMAXPROCS, before it times a step: longer than the parallel pool's
// helpers poll after a pass (parallel's spinFor, 500 µs), so that a helper
// of the step before is asleep and does not share the one core of a
// 1-thread step.
const pairedSettle = 5 * time.Millisecond

// pairedResult is one paired child's timed steps: StepMs[i][s] is step s's
// wall time at Counts[i] threads, CPUMs[i][s] the CPU time the process
// spent working in it (less the pool's polling), both in ms.
type pairedResult struct {
	Counts []int       `json:"counts"`
	StepMs [][]float64 `json:"step_ms"`
	CPUMs  [][]float64 `json:"cpu_ms"`
}

// measurePaired times training steps of c at each of j.Counts threads in
// one process, taking turns step by step (pairedSteps), setting GOMAXPROCS
// before each step as train.threads does. A step at one count and the step
// next to it at another ran on the same buffers, a fraction of a second
// apart: their ratio is the speedup with the host's slower drifts taken
// out, which separate processes minutes apart cannot give on a shared
// machine.
func measurePaired(c layers.Config, j job) (pairedResult, error) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	tr, err := newTrainer(c, j)
	if err != nil {
		return pairedResult{}, err
	}
	defer tr.close()
	step := 0
	return pairedSteps(j.Counts, j.Warmup, j.Steps, func(threads int) (wall, cpu float64, err error) {
		runtime.GOMAXPROCS(threads)
		time.Sleep(pairedSettle)
		w := startWatch()
		_, err = tr.step(step)
		step++
		wall, cpu = w.lap()
		return wall, cpu, err
	})
}

// pairedSteps calls take(count) warmup times for every count, untimed, then
// steps rounds of one take at every count: in the given order in even
// rounds and reversed in odd ones, so that a host that speeds up or slows
// down during a round favours neither count. take returns the step's wall
// and working CPU time.
func pairedSteps(counts []int, warmup, steps int, take func(threads int) (wall, cpu float64, err error)) (pairedResult, error) {
	res := pairedResult{Counts: counts, StepMs: make([][]float64, len(counts)), CPUMs: make([][]float64, len(counts))}
	for range warmup {
		for _, n := range counts {
			if _, _, err := take(n); err != nil {
				return res, err
			}
		}
	}
	order := make([]int, len(counts))
	for s := range steps {
		for i := range order {
			order[i] = i
		}
		if s%2 == 1 {
			slices.Reverse(order)
		}
		for _, i := range order {
			wall, cpu, err := take(counts[i])
			if err != nil {
				return res, err
			}
			res.StepMs[i] = append(res.StepMs[i], wall)
			res.CPUMs[i] = append(res.CPUMs[i], cpu)
		}
	}
	return res, nil
}

// mergePaired appends round r's steps to acc's (nil before the first).
func mergePaired(acc, r pairedResult) pairedResult {
	if acc.Counts == nil {
		acc = pairedResult{Counts: r.Counts, StepMs: make([][]float64, len(r.Counts)), CPUMs: make([][]float64, len(r.Counts))}
	}
	for i := range r.Counts {
		acc.StepMs[i] = append(acc.StepMs[i], r.StepMs[i]...)
		acc.CPUMs[i] = append(acc.CPUMs[i], r.CPUMs[i]...)
	}
	return acc
}

// pairRatios are the steps' speedups at count i over count 0: step s at
// Counts[0] over step s at Counts[i], sorted.
func (r pairedResult) pairRatios(i int) []float64 {
	n := min(len(r.StepMs[0]), len(r.StepMs[i]))
	out := make([]float64, n)
	for s := range n {
		out[s] = r.StepMs[0][s] / r.StepMs[i][s]
	}
	slices.Sort(out)
	return out
}

// quartiles returns the first and third quartiles of sorted v, by nearest
// rank: the values at ranks ⌈n/4⌉ and ⌈3n/4⌉.
func quartiles(v []float64) (q1, q3 float64) {
	if len(v) == 0 {
		return 0, 0
	}
	at := func(p float64) float64 { return v[max(0, int(math.Ceil(p*float64(len(v))))-1)] }
	return at(0.25), at(0.75)
}

// pairedSweep runs -rounds paired children of one config.
func pairedSweep(o scalingOpts, bc benchConfig, start time.Time, stderr io.Writer) (pairedResult, error) {
	var acc pairedResult
	for round := range o.rounds {
		j := job{Mode: modePaired, Config: bc.Name, Steps: bc.Steps, Threads: slices.Max(o.paired), Counts: o.paired,
			Batch: bc.Batch, Seed: o.seed, Warmup: o.warmup}
		var r pairedResult
		if err := runChild(j, &r, nil); err != nil {
			return acc, fmt.Errorf("%s, paired steps at %v threads: %w", bc.Name, o.paired, err)
		}
		if len(r.Counts) != len(o.paired) || len(r.StepMs) != len(o.paired) || len(r.CPUMs) != len(o.paired) {
			return acc, fmt.Errorf("%s, paired steps: the child answered for %v threads, not %v", bc.Name, r.Counts, o.paired)
		}
		acc = mergePaired(acc, r)
		var meds []string
		for i, n := range r.Counts {
			meds = append(meds, fmt.Sprintf("%.1f ms at %d", median(slices.Clone(r.StepMs[i])), n))
		}
		fmt.Fprintf(stderr, "bench: %s, paired round %d: median step %s (%.0fs)\n", bc.Name, round+1, strings.Join(meds, ", "), time.Since(start).Seconds())
	}
	return acc, nil
}

// writePaired prints one config's paired table: per thread count, the
// median and fastest step, the median of the steps' own speedups over the
// first count with their middle half, the busy cores, and the serial
// fraction that the median speedup implies.
func writePaired(w io.Writer, bc benchConfig, r pairedResult) {
	if len(r.Counts) == 0 || len(r.StepMs[0]) == 0 {
		return
	}
	first := r.Counts[0]
	fmt.Fprintf(w, "#### %s: steps taking turns in one process\n\n", bc.label())
	fmt.Fprintf(w, "| threads | steps | median step ms | fastest ms | speedup over %d (median of the pairs) | middle half of the pairs | busy cores | serial fraction s |\n", first)
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|")
	for i, n := range r.Counts {
		steps := slices.Clone(r.StepMs[i])
		var wall, cpu float64
		for s := range steps {
			wall += r.StepMs[i][s]
			cpu += r.CPUMs[i][s]
		}
		busy := "—"
		if wall >= minBusyWallMs && cpu > 0 {
			busy = fmt.Sprintf("%.2f", cpu/wall)
		}
		speed, spread, serial := "1", "", ""
		if i > 0 {
			ratios := r.pairRatios(i)
			m := median(slices.Clone(ratios))
			q1, q3 := quartiles(ratios)
			speed = fmt.Sprintf("%.2f×", m)
			spread = fmt.Sprintf("%.2f–%.2f×", q1, q3)
			serial = fmt.Sprintf("%.1f %%", 100*serialFraction(first, n, 1, 1/m))
		}
		fmt.Fprintf(w, "| %d | %d | %.2f | %.2f | %s | %s | %s | %s |\n", n, len(steps), median(slices.Clone(steps)), slices.Min(steps), speed, spread, busy, serial)
	}
	fmt.Fprintln(w)
}
