package main

import (
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	G "gorgonia.org/gorgonia"

	"github.com/vitgo/vit/experiments/internal/harness"
	"github.com/vitgo/vit/internal/parallel"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/optim"
)

// modeScaling is the child mode of the per-op sweep: → scalingResult.
const modeScaling = "scaling"

// Parts of a step that are not one of our graph ops.
const (
	partAdamW  = "AdamW"
	partClip   = "clip (norm + scale)"
	partFinite = "finite check (gradients)"
	partRest   = "rest of the step"
)

// projectAt are the thread counts of the Amdahl projection.
var projectAt = []int{8, 16, 32, 64}

// scalingResult is what a modeScaling child measured at one thread count:
// the training step and, per part (an op kind of our graph, AdamW,
// clipping, the gradient finite check), its ms per step, each the minimum
// over the rounds; and, where the system tells the process's CPU time, each
// part's wall and working CPU time summed over the rounds (Tally, the
// step's under ""), from which busyCores derives how many cores were busy.
type scalingResult struct {
	Threads int                `json:"threads"`
	StepMs  float64            `json:"step_ms"`
	Parts   map[string]float64 `json:"parts"`
	Tally   busyTally          `json:"tally,omitempty"`
	// StepWaitMs is the mean time per step that the step's goroutine
	// waited, its own chunks done, for the pool's helpers to finish theirs
	// (parallel.Waited).
	StepWaitMs float64 `json:"step_wait_ms,omitempty"`
	// PartWaitMs is the same for each part of the replay: the mean time per
	// step that the part's passes waited for their last chunks.
	PartWaitMs map[string]float64 `json:"part_wait_ms,omitempty"`
	// RoundStepMs is each round's step time (its minimum over the round's
	// steps), in round order: mergeRounds fills it.
	RoundStepMs []float64 `json:"round_step_ms,omitempty"`
}

// stopwatch measures one part's wall time and the CPU time the process
// spent working: its CPU time less the time the parallel pool's goroutines
// spent polling for work (parallel.Polled).
type stopwatch struct {
	wall time.Time
	cpu  time.Duration
}

func startWatch() stopwatch {
	return stopwatch{wall: time.Now(), cpu: workCPU()}
}

func workCPU() time.Duration {
	c, _ := processCPU()
	return c - parallel.Polled()
}

// lap returns the wall and working CPU milliseconds since the watch started.
func (w stopwatch) lap() (wall, cpu float64) {
	return ms(time.Since(w.wall)), ms(workCPU() - w.cpu)
}

// busyTally sums a part's wall and CPU time over the rounds.
type busyTally map[string][2]float64

func (b busyTally) add(part string, wall, cpu float64) {
	t := b[part]
	b[part] = [2]float64{t[0] + wall, t[1] + cpu}
}

// minBusyWallMs is the least wall time, summed over the rounds, for which
// a part's busy cores are given. Linux brings another running thread's CPU
// time up to date only at scheduler ticks, a few ms apart, so one reading
// can be off by that much, and a part of a few ms reads 0.7 or 4 cores.
const minBusyWallMs = 100

// cores is the average number of cores busy working during part (the
// whole step for ""): CPU over wall, or 0 for a part with less than
// minBusyWallMs of wall time or none measured.
func (b busyTally) cores(part string) float64 {
	t := b[part]
	if t[0] < minBusyWallMs {
		return 0
	}
	return t[1] / t[0]
}

// merge adds o's sums into b (nil when both are empty).
func (b busyTally) merge(o busyTally) busyTally {
	if len(o) == 0 {
		return b
	}
	if b == nil {
		b = busyTally{}
	}
	for k, t := range o {
		b.add(k, t[0], t[1])
	}
	return b
}

// parseThreads reads a comma-separated list of positive thread counts.
func parseThreads(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("thread count %q: want a positive integer", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// measureScaling runs j.Warmup untimed training steps, then j.Steps rounds
// of: one timed training step (train.Step.Take); a replay of every op of
// ours in the training graph in tape order, each timed alone (the replay
// recomputes the values in order, so every op sees those of a real step);
// and the clipping, the gradient finite check and an AdamW update at
// learning rate 0 (all the arithmetic, the weights unchanged) on the
// replayed gradients. Each part's time is its minimum over the rounds, as
// is the step's: on a shared machine the minimum is the least disturbed.
// What the step took beyond the parts is its rest (withRest): the tape
// machine, Gorgonia's own ops, the weight check and the loop's bookkeeping.
func measureScaling(c layers.Config, j job) (scalingResult, error) {
	res := scalingResult{Threads: j.Threads, Parts: map[string]float64{}, PartWaitMs: map[string]float64{}, StepMs: math.Inf(1)}
	tr, rp, err := startReplay(c, j)
	if err != nil {
		return res, err
	}
	defer tr.close()
	busy := busyTally{}
	for s := range j.Steps {
		w, w0 := startWatch(), parallel.Waited()
		if _, err := tr.step(j.Warmup + s); err != nil {
			return res, err
		}
		wall, cpu := w.lap()
		res.StepWaitMs += ms(parallel.Waited()-w0) / float64(j.Steps)
		res.StepMs = min(res.StepMs, wall)
		busy.add("", wall, cpu)
		parts := map[string]float64{}
		err := rp.run(s, func(part string, f func() error) error {
			w, w0 := startWatch(), parallel.Waited()
			err := f()
			wall, cpu := w.lap()
			parts[part] += wall
			res.PartWaitMs[part] += ms(parallel.Waited()-w0) / float64(j.Steps)
			busy.add(part, wall, cpu)
			return err
		})
		if err != nil {
			return res, err
		}
		keepMin(res.Parts, parts)
	}
	if _, ok := processCPU(); ok {
		res.Tally = busy
	}
	return res, nil
}

// keepMin lowers each of acc's parts to the one in parts where that is
// less, adding the parts acc lacks.
func keepMin(acc, parts map[string]float64) {
	for k, v := range parts {
		if cur, ok := acc[k]; !ok || v < cur {
			acc[k] = v
		}
	}
}

// replay re-runs a training step's work part by part, after j.Warmup
// steps: every op of ours in the training graph in tape order, then the
// clipping, the gradient finite check and an AdamW update at learning rate
// 0 on the replayed gradients.
type replay struct {
	ops    []tapeOp
	params []optim.Param
	oc     optim.Config
	opt    *optim.AdamW
}

// startReplay builds c's trainer for j, takes its j.Warmup steps and lists
// the step's parts; the caller closes the trainer.
func startReplay(c layers.Config, j job) (*trainer, *replay, error) {
	tr, err := newTrainer(c, j)
	if err != nil {
		return nil, nil, err
	}
	rp, err := newReplay(tr, j)
	if err != nil {
		tr.close()
		return nil, nil, err
	}
	return tr, rp, nil
}

// newReplay takes tr's warm-up steps and lists the step's parts.
func newReplay(tr *trainer, j job) (*replay, error) {
	for s := range j.Warmup {
		if _, err := tr.step(s); err != nil {
			return nil, err
		}
	}
	tg := tr.ts.Graph()
	ops, err := tapeOps(tg.G)
	if err != nil {
		return nil, err
	}
	params := make([]optim.Param, len(tg.Params))
	for i, n := range tg.Params {
		v, _ := n.Value().Data().([]float32)
		g, _ := tg.Grads[i].Value().Data().([]float32)
		params[i] = optim.Param{Name: n.Name(), Shape: n.Shape(), Value: v, Grad: g}
	}
	oc := optim.DefaultConfig()
	opt, err := optim.NewAdamW(oc)
	if err != nil {
		return nil, err
	}
	return &replay{ops: ops, params: params, oc: oc, opt: opt}, nil
}

// run replays the parts once, each through timed(part, f), which must call
// f; round 0 first makes AdamW allocate its moments, untimed.
func (rp *replay) run(round int, timed func(part string, f func() error) error) error {
	for _, o := range rp.ops {
		if err := timed(o.kind, func() error {
			_, err := o.node.Op().Do(o.inputs()...)
			return err
		}); err != nil {
			return fmt.Errorf("replay %s: %w", o.kind, err)
		}
	}
	timed(partClip, func() error { optim.ClipGradNorm(rp.params, rp.oc.ClipGrad.Value()); return nil })
	var bad string
	timed(partFinite, func() error {
		if name, ok := optim.GradsFinite(rp.params); !ok {
			bad = name
		}
		return nil
	})
	if bad != "" {
		return fmt.Errorf("gradient %s is non-finite", bad)
	}
	if round == 0 {
		if err := rp.opt.Step(rp.params, 0); err != nil { // allocates the moments
			return err
		}
	}
	return timed(partAdamW, func() error { return rp.opt.Step(rp.params, 0) })
}

// withRest sets r's "rest of the step": the step's time less its parts'.
func withRest(r scalingResult) scalingResult {
	rest := r.StepMs
	for k, v := range r.Parts {
		if k != partRest {
			rest -= v
		}
	}
	r.Parts[partRest] = rest
	return r
}

func ms(d time.Duration) float64 { return d.Seconds() * 1000 }

// tapeOp is one op of ours in the training graph, in execution order.
type tapeOp struct {
	node *G.Node
	in   G.Nodes
	kind string // the op's name without its parameters: "Attention(h=6)" → "Attention"
}

func (o tapeOp) inputs() []G.Value {
	v := make([]G.Value, len(o.in))
	for i, n := range o.in {
		v[i] = n.Value()
	}
	return v
}

// tapeOps lists the ops of package graph in g in execution order (the
// reverse of G.Sort's), with their inputs in argument order.
func tapeOps(g *G.ExprGraph) ([]tapeOp, error) {
	sorted, err := G.Sort(g)
	if err != nil {
		return nil, err
	}
	var out []tapeOp
	for i := len(sorted) - 1; i >= 0; i-- {
		n := sorted[i]
		if n.Op() == nil || !strings.HasPrefix(fmt.Sprintf("%T", n.Op()), "*graph.") {
			continue
		}
		var in G.Nodes
		it := g.From(n.ID())
		for it.Next() {
			in = append(in, it.Node().(*G.Node))
		}
		kind, _, _ := strings.Cut(n.Op().String(), "(")
		out = append(out, tapeOp{node: n, in: in, kind: kind})
	}
	return out, nil
}

// backwardKind says whether an op kind belongs to the backward pass.
func backwardKind(kind string) bool {
	for _, s := range []string{"Grad", "Dx", "Dw", "Db", "ColSum"} {
		if strings.Contains(kind, s) {
			return true
		}
	}
	return false
}

// serialFraction fits Amdahl's law T(n) = T(1)·(s + (1−s)/n) to the step
// times at a < b threads: s = (1/a − r/b) / (r − r/b − 1 + 1/a), r = T(a)/T(b).
func serialFraction(a, b int, ta, tb float64) float64 {
	r := ta / tb
	fa, fb := float64(a), float64(b)
	return (1/fa - r/fb) / (r - r/fb - 1 + 1/fa)
}

// busySerialFraction is the serial fraction implied by busy cores b at n
// threads, if in a fraction u of the step one core works and all n do in
// the rest: b = n(1−u) + u, so u = (n−b)/(n−1), and of the work (u + n(1−u)
// core-seconds of the step) the serial part is u. It counts only waiting:
// work that costs more CPU time at n threads than at 1 does not lower b.
func busySerialFraction(n int, b float64) float64 {
	if n < 2 || b <= 0 { // one thread, or no busy cores measured
		return math.NaN()
	}
	fn := float64(n)
	u := min(max((fn-b)/(fn-1), 0), 1)
	return u / (u + fn*(1-u))
}

// amdahl is the speedup over one thread at n threads for serial fraction s.
func amdahl(s float64, n int) float64 { return 1 / (s + (1-s)/float64(n)) }

// wantsScaling says whether the command line asks for the per-op sweep:
// -scaling, or -threads with a list of counts (-threads 1,2,4; a single
// count is the main bench's GOMAXPROCS).
func wantsScaling(args []string) bool {
	for i, a := range args {
		if a == "--" {
			return false
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if name == "scaling" || name == "simulate" || name == "paired" {
			return true
		}
		if name == "threads" {
			if !hasVal && i+1 < len(args) {
				val = args[i+1]
			}
			if strings.Contains(val, ",") {
				return true
			}
		}
	}
	return false
}

// scalingOpts are the per-op sweep's flags.
type scalingOpts struct {
	threads      []int
	configs      []benchConfig
	warmup       int
	seed         uint64
	batch, steps int
	rounds       int
	configsFlag  string
	threadsFlag  string
	// simulate are the thread counts to simulate (modeSimulate), the first
	// 1; measure says whether to run the measured sweep too (it does unless
	// only -simulate was given).
	simulate     []int
	simulateFlag string
	measure      bool
	// paired are the thread counts whose steps take turns in one process
	// (modePaired), the first the baseline.
	paired     []int
	pairedFlag string
}

func parseScaling(args []string, stderr io.Writer) (scalingOpts, error) {
	var o scalingOpts
	fs := flag.NewFlagSet("bench -scaling", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.threadsFlag, "scaling", "1,2", "comma-separated thread counts (GOMAXPROCS) to time the step's parts at")
	fs.StringVar(&o.threadsFlag, "threads", "1,2", "the same as -scaling")
	fs.StringVar(&o.configsFlag, "configs", "tiny,small", "comma-separated configs: "+strings.Join(configNames(), ", "))
	fs.IntVar(&o.batch, "batch", 0, "batch size (0: the config's own)")
	fs.IntVar(&o.steps, "steps", 0, "timed steps, each followed by a replay of the ops (0: the config's own)")
	fs.IntVar(&o.warmup, "warmup", 1, "untimed steps first")
	fs.IntVar(&o.rounds, "rounds", 1, "child processes per config and thread count, the thread counts taking turns (1, 2, 1, 2, …) so that a slow spell of a shared host falls on both; each time is the minimum over all rounds")
	fs.Uint64Var(&o.seed, "seed", 0, "seeds the weights and the random batch")
	fs.StringVar(&o.simulateFlag, "simulate", "", "comma-separated thread counts, 1 among them, at which to record each pass's chunks on one core and simulate that many cores (parallel.Record); alone, without -threads, it measures nothing else")
	fs.StringVar(&o.pairedFlag, "paired", "", "comma-separated thread counts, the baseline first (1,2), whose training steps take turns in one child process per round, -steps of each; the speedup is the median of the adjacent steps' ratios; alone, without -threads, it measures nothing else")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.measure = true
	if o.simulateFlag != "" || o.pairedFlag != "" {
		o.measure = false
		fs.Visit(func(f *flag.Flag) { o.measure = o.measure || f.Name == "threads" || f.Name == "scaling" })
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.batch < 0 || o.steps < 0 || o.warmup < 1 || o.rounds < 1 {
		return o, fmt.Errorf("-batch and -steps must be >= 0, -warmup and -rounds >= 1, got %d, %d, %d, %d", o.batch, o.steps, o.warmup, o.rounds)
	}
	var err error
	if o.threads, err = parseThreads(o.threadsFlag); err != nil {
		return o, fmt.Errorf("-scaling: %w", err)
	}
	if len(o.threads) == 0 {
		return o, fmt.Errorf("-scaling: no thread count")
	}
	if o.simulateFlag != "" {
		if o.simulate, err = parseThreads(o.simulateFlag); err != nil {
			return o, fmt.Errorf("-simulate: %w", err)
		}
		sort.Ints(o.simulate)
		if len(o.simulate) < 2 || o.simulate[0] != 1 {
			return o, fmt.Errorf("-simulate %s: want 1 (the baseline) and at least one more count", o.simulateFlag)
		}
	}
	if o.pairedFlag != "" {
		if o.paired, err = parseThreads(o.pairedFlag); err != nil {
			return o, fmt.Errorf("-paired: %w", err)
		}
		if len(o.paired) < 2 {
			return o, fmt.Errorf("-paired %s: want the baseline and at least one more count", o.pairedFlag)
		}
	}
	if o.configs, err = parseConfigs(o.configsFlag); err != nil {
		return o, fmt.Errorf("-configs: %w", err)
	}
	for i := range o.configs {
		o.configs[i] = o.configs[i].withRun(o.batch, o.steps)
	}
	return o, nil
}

// scalingMain runs the per-op sweep of every config at every thread count,
// each in a child process, and prints the tables as Markdown to stdout.
func scalingMain(args []string, stdout, stderr io.Writer) error {
	o, err := parseScaling(args, stderr)
	if err != nil {
		return err
	}
	if !parallel.Recording {
		return fmt.Errorf("the scaling, simulated and paired sweeps read internal/parallel's recording hooks (wait, polling, passes): "+
			"run them as go run -tags parallelrecord ./experiments/bench …: %w", parallel.ErrNotRecording)
	}
	start := time.Now()
	load, machine := loadAverage(), harness.DescribeMachine()
	fmt.Fprintf(stderr, "bench: scaling sweep %v (measured: %v), simulated %v, paired %v, load %s\n", o.threads, o.measure, o.simulate, o.paired, load)
	var all [][]scalingResult
	var sims [][]simResult
	var pairs []pairedResult
	for _, bc := range o.configs {
		if len(o.paired) > 0 {
			r, err := pairedSweep(o, bc, start, stderr)
			if err != nil {
				return err
			}
			pairs = append(pairs, r)
		}
		if o.measure {
			per, err := measureSweep(o, bc, start, stderr)
			if err != nil {
				return err
			}
			all = append(all, per)
		}
		if len(o.simulate) > 0 {
			per, err := simulateSweep(o, bc, start, stderr)
			if err != nil {
				return err
			}
			sims = append(sims, per)
		}
	}
	what := "(rounds × steps) of a timed step and a replay of its parts"
	if !o.measure && len(o.simulate) == 0 {
		what = "(rounds × steps at each count, taking turns) of paired steps"
	}
	sweepRun{Args: args, Start: start, Machine: machine, GoVersion: runtime.Version(), Warmup: o.warmup, Configs: o.configs,
		Rounds: o.rounds, What: what, Load: load, LoadAfter: loadAverage(), Wall: time.Since(start)}.write(stdout)
	for i, bc := range o.configs {
		if len(o.paired) > 0 {
			writePaired(stdout, bc, pairs[i])
		}
		if o.measure {
			writeScaling(stdout, bc, all[i])
		}
		if len(o.simulate) > 0 {
			writeSimulation(stdout, bc, sims[i])
		}
	}
	if o.measure {
		writeProjection(stdout, o.configs, all)
	}
	return nil
}

// sweepRun is the run a sweep's tables come from: the paragraph above
// them.
type sweepRun struct {
	Args            []string // the command line's flags
	Start           time.Time
	Machine         harness.Machine
	GoVersion       string
	Warmup          int
	Configs         []benchConfig
	Rounds          int
	What            string // what each round times
	Load, LoadAfter string // loadAverage before and after
	Wall            time.Duration
}

// write prints the command, the machine, the run and, on a busy machine, a
// warning.
func (s sweepRun) write(w io.Writer) {
	var parts []string
	for _, bc := range s.Configs {
		parts = append(parts, fmt.Sprintf("%s batch %d, %d×%d", bc.Name, bc.Batch, s.Rounds, bc.Steps))
	}
	fmt.Fprintf(w, "`go run -tags parallelrecord ./experiments/bench %s`: measured %s, %s; %d warm-up steps, then %s %s; "+
		"load average (1, 5, 15 min) %s before, %s after; %.0f s.\n\nMachine: %s.\n\n",
		strings.Join(s.Args, " "), s.Start.Format("2006-01-02 15:04"), s.GoVersion, s.Warmup, strings.Join(parts, "; "), s.What,
		s.Load, s.LoadAfter, s.Wall.Seconds(), s.Machine)
	if busy(s.Load) {
		fmt.Fprintf(w, "**The machine was busy (1-minute load ≥ %.1f): other processes shared the cores, so the speedups and the serial fraction are those of a loaded machine.**\n\n", quietLoad)
	}
}

// measureSweep runs the measured sweep of one config: -rounds child
// processes at each thread count, the counts taking turns.
func measureSweep(o scalingOpts, bc benchConfig, start time.Time, stderr io.Writer) ([]scalingResult, error) {
	per, err := sweepRounds(o, bc, modeScaling, o.threads, mergeRounds, func(r scalingResult) string {
		return fmt.Sprintf("step %.1f ms, %.2f cores busy", r.StepMs, r.Tally.cores(""))
	}, start, stderr)
	for i := range per {
		per[i] = withRest(per[i])
	}
	return per, err
}

// simulateSweep records one config at each -simulate count, in -rounds
// child processes per count, the counts taking turns; each time is the
// minimum over the rounds.
func simulateSweep(o scalingOpts, bc benchConfig, start time.Time, stderr io.Writer) ([]simResult, error) {
	return sweepRounds(o, bc, modeSimulate, o.simulate, mergeSim, func(r simResult) string {
		return fmt.Sprintf("step %.1f ms on one core, %.1f ms on %d", r.StepMs, r.SimStepMs, r.Threads)
	}, start, stderr)
}

// sweepRounds runs one config's children of mode at each thread count,
// -rounds times with the counts taking turns (1, 2, 1, 2, …, so that a slow
// spell of a shared host falls on both), folds each round into its count's
// result with merge, and logs it to stderr with describe.
func sweepRounds[R any](o scalingOpts, bc benchConfig, mode string, counts []int, merge func(acc, r R, round int) R,
	describe func(R) string, start time.Time, stderr io.Writer) ([]R, error) {
	per := make([]R, len(counts))
	for round := range o.rounds {
		for i, t := range counts {
			var r R
			j := job{Mode: mode, Config: bc.Name, Steps: bc.Steps, Threads: t, Batch: bc.Batch, Seed: o.seed, Warmup: o.warmup}
			if err := runChild(j, &r, nil); err != nil {
				return nil, fmt.Errorf("%s, %s at %d threads: %w", bc.Name, mode, t, err)
			}
			fmt.Fprintf(stderr, "bench: %s, %s at %d threads, round %d: %s (%.0fs)\n",
				bc.Name, mode, t, round+1, describe(r), time.Since(start).Seconds())
			per[i] = merge(per[i], r, round)
		}
	}
	return per, nil
}

// mergeSim folds round r's simulation into acc (the rounds before it),
// keeping every part's minimum times and the step of the round whose
// simulated step was fastest (its recorded time with it, for the split
// alone).
func mergeSim(acc, r simResult, round int) simResult {
	if round == 0 {
		r.Parts, r.SimParts = maps.Clone(r.Parts), maps.Clone(r.SimParts)
		return r
	}
	if r.SimStepMs < acc.SimStepMs { // the step recorded and simulated in the same round
		acc.StepMs, acc.SimStepMs, acc.Passes, acc.FewChunks = r.StepMs, r.SimStepMs, r.Passes, r.FewChunks
	}
	keepMin(acc.Parts, r.Parts)
	keepMin(acc.SimParts, r.SimParts)
	return acc
}

// mergeRounds folds round r's result into acc (the rounds before it): the
// step and every part keep their minimum time, the wall and CPU sums add
// up, and the waiting is the mean over the rounds.
func mergeRounds(acc, r scalingResult, round int) scalingResult {
	if round == 0 { // a copy: merging later rounds must not change r's maps
		r.Parts = maps.Clone(r.Parts)
		r.Tally = busyTally(nil).merge(r.Tally)
		r.PartWaitMs = maps.Clone(r.PartWaitMs)
		r.RoundStepMs = []float64{r.StepMs}
		return r
	}
	acc.RoundStepMs = append(acc.RoundStepMs, r.StepMs)
	mean := func(a, b float64) float64 { return (a*float64(round) + b) / float64(round+1) }
	acc.StepMs = min(acc.StepMs, r.StepMs)
	acc.Tally = acc.Tally.merge(r.Tally)
	acc.StepWaitMs = mean(acc.StepWaitMs, r.StepWaitMs)
	for k := range r.PartWaitMs {
		if acc.PartWaitMs == nil {
			acc.PartWaitMs = map[string]float64{}
		}
		acc.PartWaitMs[k] = mean(acc.PartWaitMs[k], r.PartWaitMs[k])
	}
	for k, v := range r.Parts {
		if cur, ok := acc.Parts[k]; !ok || v < cur {
			acc.Parts[k] = v
		}
	}
	return acc
}

// writeScaling prints one config's table: per part, ms per step at each
// thread count, the speedup from the first count to each other, and the
// share of the step at each count.
func writeScaling(w io.Writer, bc benchConfig, per []scalingResult) {
	if len(per) == 0 {
		return
	}
	t := newScalingTable(w, per)
	fmt.Fprintf(w, "#### %s\n\n", bc.label())
	t.header()
	first := per[0]
	var kinds []string
	for k := range first.Parts {
		if k != partRest {
			kinds = append(kinds, k)
		}
	}
	sort.Slice(kinds, func(a, b int) bool { return first.Parts[kinds[a]] > first.Parts[kinds[b]] })
	kinds = append(kinds, partRest)
	for _, k := range kinds {
		pass := "fwd"
		switch {
		case k == partRest || k == partAdamW || k == partClip || k == partFinite:
			pass = "—"
		case backwardKind(k):
			pass = "bwd"
		}
		t.line(k, pass, func(r scalingResult) float64 { return r.Parts[k] }, func(r scalingResult) float64 { return r.Tally.cores(k) },
			func(r scalingResult) float64 {
				if d, ok := r.PartWaitMs[k]; ok {
					return d
				}
				return -1 // the rest of the step: not a replayed part
			})
	}
	t.line("**whole step**", "", func(r scalingResult) float64 { return r.StepMs }, func(r scalingResult) float64 { return r.Tally.cores("") },
		func(r scalingResult) float64 { return r.StepWaitMs })
	fmt.Fprintln(w)
	writeStepNotes(w, per)
	fmt.Fprintln(w)
}

// scalingTable is one config's table being written: its thread counts
// (per, the first the baseline of the speedups), and those of them above
// one whose busy cores (busyAt) and parts' waiting (waitAt) were measured,
// each of which gets a column.
type scalingTable struct {
	w              io.Writer
	per            []scalingResult
	busyAt, waitAt []scalingResult
}

func newScalingTable(w io.Writer, per []scalingResult) *scalingTable {
	t := &scalingTable{w: w, per: per}
	for _, r := range per {
		if r.Threads > 1 && r.Tally.cores("") > 0 {
			t.busyAt = append(t.busyAt, r)
		}
		if r.Threads > 1 && len(r.PartWaitMs) > 0 {
			t.waitAt = append(t.waitAt, r)
		}
	}
	return t
}

// header prints the table's header and rule lines.
func (t *scalingTable) header() {
	w, per, first := t.w, t.per, t.per[0]
	fmt.Fprint(w, "| part | pass |")
	for _, r := range per {
		fmt.Fprintf(w, " %d thr ms |", r.Threads)
	}
	for _, r := range per[1:] {
		fmt.Fprintf(w, " speedup %d→%d |", first.Threads, r.Threads)
	}
	for _, r := range per {
		fmt.Fprintf(w, " share at %d |", r.Threads)
	}
	for _, r := range t.busyAt {
		fmt.Fprintf(w, " busy cores at %d |", r.Threads)
	}
	for _, r := range t.waitAt {
		fmt.Fprintf(w, " waited at %d ms |", r.Threads)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "|---|---|%s\n", strings.Repeat("---:|", 3*len(per)-1+len(t.busyAt)+len(t.waitAt)))
}

// line prints one row: v is its ms per step, busy its busy cores (≤ 0:
// not measured) and wait its waiting in ms (< 0: none) at a thread count.
func (t *scalingTable) line(name, pass string, v, busy, wait func(r scalingResult) float64) {
	w, per, first := t.w, t.per, t.per[0]
	fmt.Fprintf(w, "| %s | %s |", name, pass)
	for _, r := range per {
		fmt.Fprintf(w, " %.2f |", v(r))
	}
	for _, r := range per[1:] {
		fmt.Fprintf(w, " %.2f× |", v(first)/v(r))
	}
	for _, r := range per {
		fmt.Fprintf(w, " %.1f %% |", 100*v(r)/r.StepMs)
	}
	for _, r := range t.busyAt {
		if b := busy(r); b > 0 {
			fmt.Fprintf(w, " %.2f |", b)
		} else {
			fmt.Fprint(w, " — |")
		}
	}
	for _, r := range t.waitAt {
		if d := wait(r); d >= 0 {
			fmt.Fprintf(w, " %.2f |", d)
		} else {
			fmt.Fprint(w, " — |")
		}
	}
	fmt.Fprintln(w)
}

// writeStepNotes prints, under a config's table, each round's own speedup
// of the step and how long the step's goroutine waited for the helpers at
// each thread count above one.
func writeStepNotes(w io.Writer, per []scalingResult) {
	first := per[0]
	for _, r := range per[1:] {
		if ratios := roundRatios(first, r); len(ratios) > 1 {
			fmt.Fprintf(w, "Each round's own speedup of the step, %d→%d threads: %s; median %.2f×.\n",
				first.Threads, r.Threads, strings.Join(ratios, ", "), median(roundSpeedups(first, r)))
		}
	}
	for _, r := range per {
		if r.Threads > 1 {
			fmt.Fprintf(w, "At %d threads the step's goroutine waited %.2f ms a step (%.1f %% of the step, mean over the rounds) for the helpers' last chunks (`parallel.Waited`).\n",
				r.Threads, r.StepWaitMs, 100*r.StepWaitMs/r.StepMs)
		}
	}
}

// roundSpeedups are round i's step time at a over its time at b, for the
// rounds both measured: on a shared host a slow spell falls on one round's
// pair, where the minima over all rounds may pair a quiet round with a
// loaded one.
func roundSpeedups(a, b scalingResult) []float64 {
	n := min(len(a.RoundStepMs), len(b.RoundStepMs))
	out := make([]float64, n)
	for i := range out {
		out[i] = a.RoundStepMs[i] / b.RoundStepMs[i]
	}
	return out
}

// roundRatios formats roundSpeedups.
func roundRatios(a, b scalingResult) []string {
	var out []string
	for _, v := range roundSpeedups(a, b) {
		out = append(out, fmt.Sprintf("%.2f", v))
	}
	return out
}

// writeProjection prints, per config, the measured speedup, the serial
// fraction it implies and Amdahl's projection at projectAt threads.
func writeProjection(w io.Writer, cfgs []benchConfig, all [][]scalingResult) {
	if len(all) == 0 || len(all[0]) < 2 {
		return // one thread count: nothing to fit
	}
	fmt.Fprintln(w, "Amdahl fit of the whole step (serial fraction s from the first and last thread counts) and the **projected**, not measured, speedup over one thread; "+
		"beside it, the serial fraction that the last count's busy cores alone imply (the waiting, without the extra CPU work):")
	fmt.Fprintln(w)
	fmt.Fprint(w, "| config | measured speedup | serial fraction s | s from busy cores |")
	for _, n := range projectAt {
		fmt.Fprintf(w, " projected at %d |", n)
	}
	fmt.Fprintf(w, "\n|---|---:|---:|---:|%s\n", strings.Repeat("---:|", len(projectAt)))
	for i, bc := range cfgs {
		per := all[i]
		if len(per) < 2 {
			continue
		}
		a, b := per[0], per[len(per)-1]
		s := serialFraction(a.Threads, b.Threads, a.StepMs, b.StepMs)
		fmt.Fprintf(w, "| %s | %.2f× (%d→%d) | %.1f %% |", bc.label(), a.StepMs/b.StepMs, a.Threads, b.Threads, 100*s)
		if sb := busySerialFraction(b.Threads, b.Tally.cores("")); !math.IsNaN(sb) {
			fmt.Fprintf(w, " %.1f %% |", 100*sb)
		} else {
			fmt.Fprint(w, " — |")
		}
		for _, n := range projectAt {
			if s < 0 || math.IsNaN(s) {
				fmt.Fprint(w, " — |")
				continue
			}
			fmt.Fprintf(w, " %.1f× |", amdahl(s, n))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
}
