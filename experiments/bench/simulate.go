package main

import (
	"fmt"
	"io"
	"math"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"github.com/vitgo/vit/internal/parallel"
	"github.com/vitgo/vit/layers"
)

// modeSimulate is the child mode of the split simulation: → simResult.
const modeSimulate = "simulate"

// simResult is what a modeSimulate child recorded at GOMAXPROCS Threads:
// with parallel.Record on, every pass ran its chunks one after another on
// one core, each timed alone. Parts is each part's time so (as in
// scalingResult) and SimParts the time Threads cores that split it as
// recorded would take (its serial time, the recorded time less its passes'
// chunks, plus each pass's parallel.Pass.Makespan), each the minimum over
// the steps. StepMs and SimStepMs are the same two times of the step whose
// simulated time was least. Passes is that step's count of passes and
// FewChunks those with fewer chunks than Threads; Narrow counts the latter
// per part of the replay.
type simResult struct {
	Threads   int                `json:"threads"`
	StepMs    float64            `json:"step_ms"`
	SimStepMs float64            `json:"sim_step_ms"`
	Parts     map[string]float64 `json:"parts"`
	SimParts  map[string]float64 `json:"sim_parts"`
	Passes    int                `json:"passes"`
	FewChunks int                `json:"few_chunks"`
	Narrow    map[string]int     `json:"narrow,omitempty"`
}

// simClock accumulates one part's recorded passes.
type simClock struct {
	chunks, span   time.Duration // the passes' chunks, summed; their makespans, summed
	passes, narrow int
}

// measureSimulate records j.Steps steps and replays (measureScaling's) at
// GOMAXPROCS j.Threads with every pass run on one core, and turns each
// part's passes into the time j.Threads cores would take.
func measureSimulate(c layers.Config, j job) (simResult, error) {
	res := simResult{Threads: j.Threads, Parts: map[string]float64{}, SimParts: map[string]float64{},
		StepMs: math.Inf(1), SimStepMs: math.Inf(1)}
	var cur *simClock
	stop, err := parallel.Record(func(p parallel.Pass) {
		if cur == nil {
			return
		}
		cur.chunks += p.Total()
		cur.span += p.Makespan(j.Threads)
		cur.passes++
		if len(p.Chunks) < j.Threads {
			cur.narrow++
		}
	})
	if err != nil {
		return res, err
	}
	defer stop()
	tr, rp, err := startReplay(c, j)
	if err != nil {
		return res, err
	}
	defer tr.close()
	// The garbage collector would run its workers on GOMAXPROCS = j.Threads
	// Ps beside the recorded chunks (a quarter of the Ps: sixteen at 64,
	// more than the host may have cores): it runs between the steps instead.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	// clocked runs f under a fresh clock: its wall time and the time
	// j.Threads cores would take.
	clocked := func(f func() error) (wall, sim float64, clk simClock, err error) {
		cur = &simClock{}
		start := time.Now()
		err = f()
		d := time.Since(start)
		clk, cur = *cur, nil
		return ms(d), ms(d - clk.chunks + clk.span), clk, err
	}
	for s := range j.Steps {
		runtime.GC()
		wall, sim, clk, err := clocked(func() error { _, err := tr.step(j.Warmup + s); return err })
		if err != nil {
			return res, err
		}
		if sim < res.SimStepMs { // the step recorded and simulated together, as mergeSim keeps them
			res.StepMs, res.SimStepMs, res.Passes, res.FewChunks = wall, sim, clk.passes, clk.narrow
		}
		parts, simParts, narrow := map[string]float64{}, map[string]float64{}, map[string]int{}
		err = rp.run(s, func(part string, f func() error) error {
			wall, sim, clk, err := clocked(f)
			parts[part] += wall
			simParts[part] += sim
			narrow[part] += clk.narrow
			return err
		})
		if err != nil {
			return res, err
		}
		keepMin(res.Parts, parts)
		keepMin(res.SimParts, simParts)
		res.Narrow = narrow
	}
	return res, nil
}

// writeSimulation prints one config's simulated table: per part, the time
// recorded on one core at GOMAXPROCS 1, then at each other count the time
// that many cores would take with that count's split and the speedup over
// the first; last, the part's passes with fewer chunks than the largest
// count. Under the parts: the whole step, and the step's speedup from the
// split alone (its own recorded time over its simulated one, in the same
// process: without the extra work the split costs, and without the noise of
// comparing two processes).
func writeSimulation(w io.Writer, bc benchConfig, per []simResult) {
	if len(per) < 2 {
		return
	}
	first, last := per[0], per[len(per)-1]
	fmt.Fprintf(w, "#### %s: simulated from each pass's chunks, recorded on one core\n\n", bc.label())
	fmt.Fprintf(w, "| part | %d thr ms |", first.Threads)
	for _, r := range per[1:] {
		fmt.Fprintf(w, " %d thr ms | speedup 1→%d |", r.Threads, r.Threads)
	}
	fmt.Fprintf(w, " passes with < %d chunks |\n|---|---:|%s---:|\n", last.Threads, strings.Repeat("---:|---:|", len(per)-1))
	var kinds []string
	for k := range first.Parts {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(a, b int) bool { return first.Parts[kinds[a]] > first.Parts[kinds[b]] })
	line := func(name string, base float64, sim func(r simResult) float64, narrow string) {
		fmt.Fprintf(w, "| %s | %.2f |", name, base)
		for _, r := range per[1:] {
			fmt.Fprintf(w, " %.2f | %.2f× |", sim(r), base/sim(r))
		}
		fmt.Fprintf(w, " %s |\n", narrow)
	}
	for _, k := range kinds {
		line(k, first.Parts[k], func(r simResult) float64 { return r.SimParts[k] }, fmt.Sprint(last.Narrow[k]))
	}
	line("**whole step**", first.StepMs, func(r simResult) float64 { return r.SimStepMs }, fmt.Sprintf("%d of %d", last.FewChunks, last.Passes))
	fmt.Fprintf(w, "| whole step, the split alone |  |")
	for _, r := range per[1:] {
		fmt.Fprintf(w, " %.2f of %.2f | %.2f× |", r.SimStepMs, r.StepMs, r.StepMs/r.SimStepMs)
	}
	fmt.Fprintln(w, "  |")
	fmt.Fprintln(w)
}
