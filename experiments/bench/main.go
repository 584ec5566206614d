// Command bench measures our ViT's training and evaluation throughput against
// the PyTorch peer (shared/bench/vit_ref.py) on the same configs, threads and
// batch, and writes README.md (from readme.md.tmpl) with the tables: images/s, GFLOP/s (forward matmul
// FLOPs ×3 for a training step, vit_ref.py's convention), the BLAS floor (the
// time of only the step's own SGEMM calls, with its exact shapes) as a share
// of the step, peak RSS, and the ratios ours/peer.
//
//	go run ./experiments/bench [-steps 30] [-configs tiny,small] [-peer=true] [-threads 2]
//	go run -tags openblas ./experiments/bench          # SGEMM through cblas_sgemm
//	go run ./experiments/bench -configs tiny -peer=false -cpuprofile /tmp/tiny.prof
//	go run ./experiments/bench -configs s16 -rounds 1     # one ImageNet shape at a time
//	go run ./experiments/bench -scaling 1,2 -configs tiny,small   # per-op scaling, to stdout (SCALING.md)
//	go run ./experiments/bench -precision bf16          # ours in bf16, the peer in float32 and --amp bf16
//	go run ./experiments/bench -precision fp32,bf16     # ours in both
//	go run ./experiments/bench -serving -models ti,s    # serving graphs against ONNX Runtime (serving/README.md)
//
// -precision lists the precisions ours runs in (graph.Precision); with bf16
// among them the peer runs twice per round, in float32 and under
// torch.autocast bfloat16 (vit_ref.py --amp bf16), and the tables show
// both.
//
// Every measurement runs in a child process (this binary re-executed with
// VIT_BENCH_CHILD set), so that its peak RSS is its own: the parent reads the
// child's rusage. The BLAS floor runs in a second child that alternates a
// real step, an eval forward and the floor's products, so that its share of
// the step compares times taken under the same load (the host may be
// shared). Inputs are random MNIST-shaped images (normalised with MNIST's
// mean and std) and random one-hot targets.
package main

import (
	_ "embed"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vitgo/vit/evaluate"
	"github.com/vitgo/vit/experiments/internal/harness"
	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/graph/kernels"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/optim"
	"github.com/vitgo/vit/train"
)

//go:embed readme.md.tmpl
var readme string

// opts are the command's flags.
type opts struct {
	steps      int // 0: each config's own
	rounds     int
	configs    string
	peer       bool
	threads    int
	batch      int // 0: each config's own
	warmup     int
	seed       uint64
	python     string
	peerScript string
	cpuProfile string
	precision  string // comma-separated graph.Precision values for ours
	recompute  string // layers.Recompute of ours's bf16 training steps
}

var o opts

var experiment = harness.Experiment[results]{
	Name:   "bench",
	Readme: readme,
	Flags: func(fs *flag.FlagSet) {
		fs.IntVar(&o.steps, "steps", 0, "timed training steps and eval forwards per config, after the warm-up ones (0: the config's own, 30 for tiny and small, 5 for s16, 3 for b16, 2 for b16-384)")
		fs.IntVar(&o.warmup, "warmup", 3, "untimed training steps (and eval forwards) before the timed ones; the peer always runs 3")
		fs.IntVar(&o.rounds, "rounds", 3, "measurements of ours and the peer per config, alternating (ours first in odd rounds, the peer first in even ones); the tables give medians")
		fs.StringVar(&o.configs, "configs", "tiny,small", "comma-separated configs: "+strings.Join(configNames(), ", "))
		fs.BoolVar(&o.peer, "peer", true, "also run the PyTorch peer (shared/bench/vit_ref.py)")
		fs.IntVar(&o.threads, "threads", 2, "GOMAXPROCS for ours, --threads for the peer")
		fs.IntVar(&o.batch, "batch", 0, "batch size of the training and eval steps (0: the config's own, 128 for tiny and small, 32 for s16, 16 for b16 and b16-384)")
		fs.Uint64Var(&o.seed, "seed", 0, "seeds the weights and the random batch")
		fs.StringVar(&o.python, "python", "/usr/bin/python3", "the interpreter that sees Debian's python3-torch")
		fs.StringVar(&o.peerScript, "peer-script", "", "path of vit_ref.py (default: ../shared/bench/vit_ref.py from the repository root)")
		fs.StringVar(&o.precision, "precision", "fp32", "comma-separated precisions of ours: fp32, bf16 (bfloat16 products, float32 accumulation); with bf16 the peer also runs with --amp bf16")
		fs.StringVar(&o.recompute, "recompute", "none", "what ours's bf16 training steps recompute in the backward pass (train.recompute): none, mlp (each block's fc1 output) or block (all of a block but its input and attention's output)")
		fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of our timed training steps to this file (one config: as is; several: NAME.CONFIG.EXT)")
	},
	Measure: measure,
}

func main() {
	harness.ServeChild(childEnv, child)
	if wantsServing(os.Args[1:]) { // serving graphs against ONNX Runtime: serving/README.md
		if err := servingMain(os.Args[1:], os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "bench -serving:", err)
			os.Exit(1)
		}
		return
	}
	if wantsScaling(os.Args[1:]) { // the per-op sweep prints its tables; it does not rewrite the README
		if err := scalingMain(os.Args[1:], os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	harness.Main(experiment)
}

// precisions parses -precision: distinct graph.Precision values, in the
// order given ("" = fp32, the zero opts).
func (o opts) precisions() ([]graph.Precision, error) {
	if o.precision == "" {
		return []graph.Precision{graph.FP32}, nil
	}
	var out []graph.Precision
	seen := map[graph.Precision]bool{}
	for _, s := range strings.Split(o.precision, ",") {
		var p graph.Precision
		if err := p.Set(strings.TrimSpace(s)); err != nil {
			return nil, fmt.Errorf("-precision: %w", err)
		}
		if p.IsInt8() {
			return nil, fmt.Errorf("-precision: %s is an inference precision; this bench trains (fp32 or bf16)", p)
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out, nil
}

// peerModes are the peer's runs for ours in precs: float32, and
// torch.autocast bfloat16 when bf16 is among them.
func peerModes(precs []graph.Precision) []graph.Precision {
	modes := []graph.Precision{graph.FP32}
	if slices.Contains(precs, graph.BF16) {
		modes = append(modes, graph.BF16)
	}
	return modes
}

// check validates the flags and returns the configs they name.
func (o opts) check() ([]benchConfig, error) {
	if err := layers.Recompute(o.recompute).Validate(); err != nil {
		return nil, fmt.Errorf("-recompute: %w", err)
	}
	precs, err := o.precisions()
	if err != nil {
		return nil, err
	}
	if layers.Recompute(o.recompute).Active() && !slices.Contains(precs, graph.BF16) {
		return nil, fmt.Errorf("-recompute %s: only bf16 steps recompute; give -precision bf16 or fp32,bf16", o.recompute)
	}
	for _, f := range []struct {
		name   string
		v, min int
	}{{"-steps", o.steps, 0}, {"-rounds", o.rounds, 1}, {"-threads", o.threads, 1}, {"-batch", o.batch, 0}, {"-warmup", o.warmup, 1}} {
		if f.v < f.min {
			return nil, fmt.Errorf("%s: must be at least %d, got %d", f.name, f.min, f.v)
		}
	}
	cs, err := parseConfigs(o.configs)
	if err != nil {
		return nil, fmt.Errorf("-configs: %w", err)
	}
	for i := range cs {
		cs[i] = cs[i].withRun(o.batch, o.steps)
	}
	return cs, nil
}

// measure runs every config the flags name, ours and the peer, and
// returns the results with the machine's header.
func measure(e *harness.Env) (results, error) {
	configs, err := o.check()
	if err != nil {
		return results{}, err
	}
	if o.peer && o.peerScript == "" {
		if o.peerScript, err = defaultPeerScript(); err != nil {
			return results{}, err
		}
	}
	precs, err := o.precisions()
	if err != nil {
		return results{}, err
	}
	start := time.Now()
	h := o.measureHeader(e, configs, precs, start)
	var rows []row
	for _, bc := range configs {
		group, err := measureConfig(e, bc, precs, h.Recompute, start, len(configs))
		if err != nil {
			return results{}, err
		}
		rows = append(rows, group...)
	}
	h.LoadAfter = loadAverage()
	h.Wall = time.Since(start)
	return results{Header: h, Rows: rows}, nil
}

// measureHeader is the header of a run of configs in precs, with the bf16
// backend, its recompute and its peak when bf16 is among them; it logs the
// load and warns when the machine is busy.
func (o opts) measureHeader(e *harness.Env, configs []benchConfig, precs []graph.Precision, start time.Time) header {
	h := o.header(configs, start)
	h.Precisions = precs
	if slices.Contains(precs, graph.BF16) {
		h.BF16Backend = kernels.BF16Backend()
		if r := layers.Recompute(o.recompute); r.Active() {
			h.Recompute = r
		}
		if g, ok := kernels.BF16Peak(o.threads); ok {
			h.BF16Peak = g
			e.Log.Infof("bench: %s alone: %.0f GFLOP/s on %d threads (kernels.BF16Peak)", h.BF16Backend, g, o.threads)
		}
	}
	e.Log.Infof("bench: load %s, %d threads", h.Load, o.threads)
	if busy(h.Load) {
		e.Log.Warnf("bench: 1-minute load %s ≥ %.1f: other processes share the cores, the numbers will be noisy",
			strings.Fields(h.Load)[0], quietLoad)
	}
	return h
}

// measureConfig measures one config: one row per precision of ours, the
// peer's runs (float32, and --amp bf16 when ours runs bf16) shared by the
// config's rows, o.rounds rounds in alternating order, then each row's BLAS
// floor. nConfigs is the number of configs in the run (for profile names).
func measureConfig(e *harness.Env, bc benchConfig, precs []graph.Precision, recompute layers.Recompute, start time.Time, nConfigs int) ([]row, error) {
	group := make([]row, len(precs))
	var peers, ampPeers []peerResult
	runs := oursRuns(e, bc, precs, recompute, group, start, nConfigs)
	if o.peer {
		runs = append(runs, peerRuns(e, bc, precs, &peers, &ampPeers, start)...)
	}
	for round := range o.rounds {
		// Ours first in odd rounds, the peer first in even ones.
		order := slices.Clone(runs)
		if round%2 == 1 {
			slices.Reverse(order)
		}
		for _, m := range order {
			if err := m(round); err != nil {
				return nil, err
			}
		}
	}
	for i := range group {
		r := &group[i]
		j := job{Mode: modeFloor, Config: bc.Name, Steps: bc.Steps, Threads: o.threads, Batch: bc.Batch, Seed: o.seed, Warmup: o.warmup, Precision: r.Prec}
		if r.Prec.IsBF16() {
			j.Recompute = recompute // the floor's step is the timed one
		}
		if err := runChild(j, &r.Floor, nil); err != nil {
			return nil, fmt.Errorf("%s: BLAS floor %s: %w", bc.Name, r.Prec, err)
		}
		e.Log.Infof("bench: %s %s BLAS floor: train %.1f of %.1f ms, eval %.1f of %.1f ms (%.0fs)",
			bc.Name, r.Prec, r.Floor.TrainMs(), r.Floor.StepMs, r.Floor.EvalMs(), r.Floor.EvalStepMs, time.Since(start).Seconds())
		r.peers, r.ampPeers = peers, ampPeers
		r.summarise()
	}
	return group, nil
}

// oursRuns are the runs of ours for config bc, one per precision, each
// adding its round's measurement to its row of group.
func oursRuns(e *harness.Env, bc benchConfig, precs []graph.Precision, recompute layers.Recompute, group []row, start time.Time, nConfigs int) []func(int) error {
	var runs []func(int) error
	for i, prec := range precs {
		group[i] = row{Cfg: bc, Prec: prec, FirstOfConfig: i == 0}
		r := &group[i]
		runs = append(runs, func(round int) error {
			j := job{Mode: modeSteps, Config: bc.Name, Steps: bc.Steps, Threads: o.threads, Batch: bc.Batch, Seed: o.seed, Warmup: o.warmup, Precision: prec}
			if prec.IsBF16() {
				j.Recompute = recompute
			}
			if round == 0 {
				j.CPUProfile = profilePath(o.cpuProfile, bc.Name+precSuffix(precs, prec), nConfigs*len(precs))
			}
			var m measured
			if err := runChild(j, &m.ours, &m.rss); err != nil {
				return fmt.Errorf("%s: ours %s: %w", bc.Name, prec, err)
			}
			r.rounds = append(r.rounds, m)
			e.Log.Infof("bench: %s round %d ours %s (%s): train %.0f img/s, eval %.0f img/s, %.0f MiB (%.0fs)",
				bc.Name, round+1, prec, m.ours.Backend, m.ours.TrainImgS, m.ours.EvalImgS, mib(m.rss), time.Since(start).Seconds())
			return nil
		})
	}
	return runs
}

// peerRuns are the peer's runs for config bc (peerModes), each appending its
// round's result to peers (float32) or ampPeers (bf16).
func peerRuns(e *harness.Env, bc benchConfig, precs []graph.Precision, peers, ampPeers *[]peerResult, start time.Time) []func(int) error {
	var runs []func(int) error
	for _, mode := range peerModes(precs) {
		runs = append(runs, func(round int) error {
			p, err := runPeer(o.python, o.peerScript, bc, bc.Batch, o.threads, bc.Steps, mode)
			if err != nil {
				return fmt.Errorf("%s: peer %s: %w", bc.Name, peerName(mode), err)
			}
			if mode == graph.BF16 {
				*ampPeers = append(*ampPeers, p)
			} else {
				*peers = append(*peers, p)
			}
			e.Log.Infof("bench: %s round %d peer %s: train %.0f img/s, eval %.0f img/s, %.0f MiB (%.0fs)",
				bc.Name, round+1, peerName(mode), p.TrainImgS, p.EvalImgS, mib(p.RSS), time.Since(start).Seconds())
			return nil
		})
	}
	return runs
}

// header describes the run about to measure configs: the machine, the
// load, and the settings the flags gave.
func (o opts) header(configs []benchConfig, start time.Time) header {
	return header{Machine: harness.DescribeMachine(), Start: start, Load: loadAverage(), GoVersion: runtime.Version(),
		Threads: o.threads, Batch: uniform(configs, func(b benchConfig) int { return b.Batch }),
		Steps: uniform(configs, func(b benchConfig) int { return b.Steps }), Warmup: o.warmup, Rounds: o.rounds}
}

// uniform returns f of every config when they agree, else 0.
func uniform(cs []benchConfig, f func(benchConfig) int) int {
	for _, c := range cs[1:] {
		if f(c) != f(cs[0]) {
			return 0
		}
	}
	return f(cs[0])
}

// profilePath names config's profile file: path itself for a single
// config, else path with the config inserted before the extension.
func profilePath(path, config string, nconfigs int) string {
	if path == "" || nconfigs == 1 {
		return path
	}
	dot := strings.LastIndexByte(path, '.')
	if dot <= strings.LastIndexByte(path, '/') {
		return path + "." + config
	}
	return path[:dot] + "." + config + path[dot:]
}

// trainer holds one config's training step (train.Step, as train.Run builds
// it), an evaluator of the same batch sharing its arena, and one fixed
// random batch (vit_ref.py's bench also repeats one batch): MNIST-shaped
// uniform pixels normalised with MNIST's mean and std, one-hot targets.
type trainer struct {
	batch  int
	ts     *train.Step
	tg     *layers.Graph // the step's graph, for the floor's plan
	eval   *evaluate.Evaluator
	x, tgt []float32
}

func newTrainer(c layers.Config, j job) (*trainer, error) {
	arena := graph.NewArena() // shared by both graphs, as train.Run does
	lr := optim.DefaultConfig().LR
	ts, m, err := harness.NewStep(c, j.Batch, j.Seed, train.StepConfig{LR: func(int) float64 { return lr }, Arena: arena, Precision: j.Precision, Recompute: j.Recompute})
	if err != nil {
		return nil, err
	}
	tr := &trainer{batch: j.Batch, ts: ts, tg: ts.Graph().Graph}
	if tr.eval, err = evaluate.NewIn(m, j.Batch, arena, evaluate.WithPrecision(j.Precision)); err != nil {
		ts.Close()
		return nil, err
	}
	tr.x, tr.tgt = harness.RandomBatch(rand.New(rand.NewPCG(j.Seed, 7)), j.Batch, c.InChans*c.ImgSize[0]*c.ImgSize[1], c.NumClasses,
		func(r *rand.Rand) float64 { return (r.Float64() - mnistMean) / mnistStd })
	return tr, nil
}

func (tr *trainer) close() {
	tr.ts.Close()
	tr.eval.Close()
}

// step is training step s as train.Run takes it (train.Step: forward and
// backward on the tape machine, clipping, the finite checks, the AdamW
// update). It returns the loss.
func (tr *trainer) step(s int) (float32, error) {
	st, err := tr.ts.Take(tr.x, tr.tgt, s)
	return float32(st.Loss), err
}

// forward is one eval forward of the batch.
func (tr *trainer) forward() error {
	_, err := tr.eval.Logits(tr.x, tr.batch)
	return err
}

// childEnv carries a job (JSON) to a re-executed copy of this binary.
const childEnv = "VIT_BENCH_CHILD"

// The child's modes.
const (
	modeSteps = "steps" // training steps and eval forwards → stepsResult
	modeFloor = "floor" // the SGEMM calls of one step, alone → floorResult
)

// job is one measurement, run in a child process.
type job struct {
	Mode       string `json:"mode"`
	Config     string `json:"config"`
	Steps      int    `json:"steps"`
	Threads    int    `json:"threads"`
	Batch      int    `json:"batch"`
	Warmup     int    `json:"warmup"` // untimed steps before the timed ones
	Seed       uint64 `json:"seed"`
	CPUProfile string `json:"cpu_profile,omitempty"`
	Counts     []int  `json:"counts,omitempty"` // modePaired: the thread counts that take turns
	// BatchSteps are modeServing's timed runs at batch 8 and 32 (Steps:
	// at batch 1).
	BatchSteps int `json:"batch_steps,omitempty"`
	// Precision is the products' (graph.Precision) of the training and
	// eval graphs and of the floor's calls; "" = fp32.
	Precision graph.Precision `json:"precision,omitempty"`
	// Recompute is the training graph's (layers.Recompute); "" = none.
	Recompute layers.Recompute `json:"recompute,omitempty"`
}

// runChild runs j in a fresh process of this binary (GOMAXPROCS = threads)
// and decodes its result line into out; rssKiB, if not nil, receives the
// child's peak resident set (rusage ru_maxrss, KiB).
func runChild(j job, out any, rssKiB *int64) error {
	spec, err := json.Marshal(j)
	if err != nil {
		return err
	}
	exe, err := harness.Self()
	if err != nil {
		return err
	}
	rss, err := harness.RunResult(exec.Command(exe), harness.ResultPrefix, out,
		childEnv+"="+string(spec), "GOMAXPROCS="+strconv.Itoa(j.Threads))
	if err != nil {
		return fmt.Errorf("child %s: %w", j.Mode, err)
	}
	if rssKiB != nil {
		*rssKiB = rss
	}
	return nil
}

// child runs the job in spec and returns its result.
func child(spec string) (any, error) {
	var j job
	if err := json.Unmarshal([]byte(spec), &j); err != nil {
		return nil, fmt.Errorf("%s: %w", childEnv, err)
	}
	if j.Mode == modeServing { // Config is a layers preset
		return measureServing(j)
	}
	bc, ok := benchConfigs[j.Config]
	if !ok {
		return nil, fmt.Errorf("%s: unknown config %q", childEnv, j.Config)
	}
	runtime.GOMAXPROCS(j.Threads)
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(20) // as cmd/train runs: ops own their buffers, so GC has little to do
	}
	switch j.Mode {
	case modeSteps:
		return measureSteps(bc.model(), j)
	case modeFloor:
		return measureFloor(bc.model(), j)
	case modeScaling:
		return measureScaling(bc.model(), j)
	case modeSimulate:
		return measureSimulate(bc.model(), j)
	case modePaired:
		return measurePaired(bc.model(), j)
	}
	return nil, fmt.Errorf("%s: unknown mode %q", childEnv, j.Mode)
}

func mib(kib int64) float64 { return float64(kib) / 1024 }

// precSuffix is what a profile's name gains for precision p: nothing when
// ours runs in one precision, else "-" and p.
func precSuffix(precs []graph.Precision, p graph.Precision) string {
	if len(precs) == 1 {
		return ""
	}
	return "-" + string(p)
}
