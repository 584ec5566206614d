// Command dp_bench measures data-parallel training on this machine: the
// step time and the share of it spent in the gradient all-reduce, for one
// rank × 2 threads against 2 ranks × 1 thread (mpirun --oversubscribe), and
// the ring all-reduce paper model for larger jobs. Like every experiment it
// writes results.json and renders README.md from it (readme.md.tmpl;
// -render redraws the README alone).
//
//	go build -tags mpi -o /tmp/dp_bench ./experiments/dp_bench
//	/tmp/dp_bench [-configs tiny,small,s16] [-steps 8]
//	/tmp/dp_bench -model            # only the paper model
//
// Every run is a child process (this binary with VIT_DP_BENCH_CHILD set),
// started directly for one rank and through mpirun for two. A rank's step is
// train.Step.Take on its share of a fixed random global batch; the
// all-reduce share is the time inside the gradient all-reduce (waiting for
// the slower rank included) over the step time, min–max over ranks. A bare
// all-reduce of the same buffer after a barrier gives the transfer alone.
package main

import (
	_ "embed"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/dist"
	"github.com/vitgo/vit/experiments/internal/harness"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/train"
)

// childEnv carries a child's job (JSON).
const childEnv = "VIT_DP_BENCH_CHILD"

// benchConfig is one model of the benchmark.
type benchConfig struct {
	Name                     string
	Img, Patch, Chans, Batch int
	Dim, Depth, Heads        int
}

func (c benchConfig) label() string {
	return fmt.Sprintf("%s (d%d L%d h%d, %d px)", c.Name, c.Dim, c.Depth, c.Heads, c.Img)
}

// benchConfigs: TINY and SMALL as experiments/bench has them (MNIST-shaped,
// 4×4 patches, mlp_ratio 4), and ViT-S/16 at 224.
var benchConfigs = map[string]benchConfig{
	"tiny":  {"tiny", 28, 4, 1, 128, 64, 4, 4},
	"small": {"small", 28, 4, 1, 128, 192, 6, 3},
	"s16":   {"s16", 224, 16, 3, 16, 384, 12, 6},
}

// defaultModelRows are what `dp_bench -model` models: the quiet-machine step
// times of TINY and SMALL at batch 128 on 2 threads that `go run
// ./experiments/bench` measured (1,913 and 299 img/s) on defaultModelMachine.
var defaultModelRows = []modelRow{
	{"TINY (d64 L4 h4, 28 px)", 205066, 1e3 * 128 / 1913},
	{"SMALL (d192 L6 h3, 28 px)", 2684554, 1e3 * 128 / 299},
}

// defaultModelMachine is the machine defaultModelRows were measured on, as
// far as the bench recorded it then, named by its generation and
// instruction set.
var defaultModelMachine = harness.Machine{CPU: "AMD EPYC Zen 5 (AVX-512, AVX512_BF16)", Cores: 2, Backend: "native avx512 14x32", Vector: "AVX-512 and AVX2"}

// defaultModelSource is where defaultModelRows come from.
const defaultModelSource = "`go run ./experiments/bench`'s TINY and SMALL steps (batch 128, 2 threads; [its README](../bench/README.md)), not measured by this run"

// modelRow is one model of the paper model: its parameters and the step
// time of one node (one rank × 2 threads).
type modelRow struct {
	name      string
	params    int
	computeMs float64
}

// job is one child run: a config on each rank.
type job struct {
	Config         string
	Threads, Steps int
}

// result is one run's measurement, printed by rank 0.
type result struct {
	Name   string    `json:"name"`
	Params int       `json:"params"`
	StepMs []float64 `json:"step_ms"` // mean step time of each rank
	Share  []float64 `json:"share"`   // all-reduce time over step time, each rank
	BareMs float64   `json:"bare_ms"` // one all-reduce of the gradients after a barrier (rank 0)
}

//go:embed readme.md.tmpl
var readme string

var flags struct {
	configs   string
	steps     int
	modelOnly bool
}

var experiment = harness.Experiment[results]{
	Name:   "dp_bench",
	Readme: readme,
	Flags: func(fs *flag.FlagSet) {
		fs.StringVar(&flags.configs, "configs", "tiny,small", "configs to measure: tiny, small, s16 (ViT-S/16 at 224)")
		fs.IntVar(&flags.steps, "steps", 8, "timed steps per run (after 2 untimed ones)")
		fs.BoolVar(&flags.modelOnly, "model", false, "measure nothing: only the paper model of ring all-reduce, on the bench's step times")
	},
	Measure: func(*harness.Env) (results, error) { return measure(flags.configs, flags.steps, flags.modelOnly) },
}

func main() {
	harness.ServeChild(childEnv, child)
	harness.Main(experiment)
}

// results is what a run recorded: the measured table (none with -model)
// and the paper model on its step times.
type results struct {
	// Measured is the table of the runs, under the machine they ran on;
	// nil with -model.
	Measured *table `json:",omitempty"`
	// Model is the paper model; its Machine is where its step compute was
	// measured.
	Model table
}

// table is one table of the README and the machine its numbers come from
// (harness.Machine's String, or by hand: a CPU model and its instruction
// set).
type table struct {
	Machine string
	// Source says where the figures come from when not from the table
	// above: the paper model's step compute.
	Source string `json:",omitempty"`
	Head   []string
	Rows   [][]string
}

// measuredHead is the measured table's header.
var measuredHead = []string{"model", "params", "global batch", "1 rank × 2 threads", "2 ranks × 1 thread",
	"all-reduce share at 2 ranks", "bare all-reduce"}

// measure runs each config on 1 rank × 2 threads and 2 ranks × 1 thread
// and models larger jobs on the first's step times; modelOnly measures
// nothing and models the bench's.
func measure(configs string, steps int, modelOnly bool) (results, error) {
	if modelOnly {
		m := paperModel(defaultModelMachine.String(), defaultModelRows)
		m.Source = defaultModelSource
		return results{Model: m}, nil
	}
	machine := harness.DescribeMachine().String()
	m := &table{Machine: machine, Head: measuredHead}
	var rows []modelRow
	for _, name := range strings.Split(configs, ",") {
		c, ok := benchConfigs[strings.TrimSpace(name)]
		if !ok {
			return results{}, fmt.Errorf("-configs: unknown config %q", name)
		}
		one, err := launch(c.Name, 1, 2, steps)
		if err != nil {
			return results{}, err
		}
		two, err := launch(c.Name, 2, 1, steps)
		if err != nil {
			return results{}, err
		}
		m.Rows = append(m.Rows, []string{c.label(), fmt.Sprint(two.Params), fmt.Sprint(c.Batch), fmt.Sprintf("%.1f ms", one.StepMs[0]),
			fmt.Sprintf("%.1f ms", slices.Max(two.StepMs)), fmt.Sprintf("%.1f–%.1f %%", 100*slices.Min(two.Share), 100*slices.Max(two.Share)),
			fmt.Sprintf("%.2f ms", two.BareMs)})
		rows = append(rows, modelRow{two.Name, two.Params, one.StepMs[0]})
	}
	model := paperModel(machine, rows)
	model.Source = "the 1 rank × 2 threads steps above"
	return results{Measured: m, Model: model}, nil
}

// launch runs one measurement: ranks processes of threads threads each.
func launch(name string, ranks, threads, steps int) (result, error) {
	self, err := harness.Self()
	if err != nil {
		return result{}, err
	}
	cmd := exec.Command(self)
	if ranks > 1 {
		cmd = exec.Command("mpirun", "--oversubscribe", "--bind-to", "none", "-np", fmt.Sprint(ranks), self)
	}
	spec, err := json.Marshal(job{name, threads, steps})
	if err != nil {
		return result{}, err
	}
	var r result
	if _, err := harness.RunResult(cmd, harness.ResultPrefix, &r, childEnv+"="+string(spec)); err != nil {
		return result{}, fmt.Errorf("%s on %d ranks: %w", name, ranks, err)
	}
	return r, nil
}

// child runs one rank's part of a job; rank 0 returns the result.
func child(spec string) (any, error) {
	var j job
	if err := json.Unmarshal([]byte(spec), &j); err != nil {
		return nil, fmt.Errorf("%s: %w", childEnv, err)
	}
	runtime.GOMAXPROCS(j.Threads)
	c := benchConfigs[j.Config]
	comm, err := dist.Init()
	if err != nil {
		return nil, err
	}
	defer dist.Finalize()

	mc := layers.DefaultConfig()
	mc.ImgSize, mc.PatchSize, mc.InChans, mc.NumClasses = layers.Size2{c.Img, c.Img}, c.Patch, c.Chans, 10
	mc.EmbedDim, mc.Depth, mc.NumHeads, mc.MLPRatio = c.Dim, c.Depth, c.Heads, 4
	step, m, err := harness.NewStep(mc, c.Batch, 1, train.StepConfig{StepsPerEpoch: 100, TotalSteps: 100, Comm: comm})
	if err != nil {
		return nil, err
	}
	defer step.Close()

	// This rank's rows of one fixed random global batch, each drawn from its own stream.
	rows, err := data.Slice(c.Batch, comm.Rank(), comm.Size())
	if err != nil {
		return nil, err
	}
	size := c.Chans * c.Img * c.Img
	x, tgt := make([]float32, 0, len(rows)*size), make([]float32, 0, len(rows)*10)
	for _, p := range rows {
		xi, ti := harness.RandomBatch(rand.New(rand.NewPCG(uint64(p), 7)), 1, size, 10, (*rand.Rand).NormFloat64)
		x, tgt = append(x, xi...), append(tgt, ti...)
	}
	var total, reduce time.Duration
	for s := range 2 + j.Steps {
		start := time.Now()
		st, err := step.Take(x, tgt, s)
		if err != nil {
			return nil, err
		}
		if s >= 2 {
			total += time.Since(start)
			reduce += st.Reduce
		}
	}
	// A bare all-reduce of a buffer of the gradients' size, after a barrier.
	buf := make([]float32, m.NumParams()+1)
	var bare time.Duration
	for range 3 {
		if err := comm.Barrier(); err != nil {
			return nil, err
		}
		start := time.Now()
		if err := comm.AllreduceFloat32(buf); err != nil {
			return nil, err
		}
		bare += time.Since(start)
	}

	n := comm.Size()
	stats := make([]float64, 2*n)
	stats[comm.Rank()] = total.Seconds() * 1e3 / float64(j.Steps)
	stats[n+comm.Rank()] = reduce.Seconds() / total.Seconds()
	if err := comm.AllreduceFloat64(stats); err != nil || comm.Rank() != 0 {
		return nil, err
	}
	return result{Name: c.label(), Params: m.NumParams(), StepMs: stats[:n], Share: stats[n:], BareMs: bare.Seconds() * 1e3 / 3}, nil
}

// paperModel is the table of the predicted scaling efficiency of N nodes,
// each doing the measured one-machine step (weak scaling: the per-node
// batch fixed), with a ring all-reduce moving 2(N−1)/N × 4 bytes × params
// per step at the link's bandwidth and no overlap with the backward pass:
// efficiency = compute / (compute + all-reduce).
func paperModel(machine string, rows []modelRow) table {
	ns := []int{2, 4, 8, 16, 32, 64}
	head := []string{"model", "step compute", "link"}
	for _, n := range ns {
		head = append(head, fmt.Sprintf("N=%d", n))
	}
	var cells [][]string
	for _, r := range rows {
		for _, gbps := range []float64{10, 100} {
			row := []string{r.name, fmt.Sprintf("%.0f ms", r.computeMs), fmt.Sprintf("%g Gb/s", gbps)}
			for _, n := range ns {
				bytes := 2 * float64(n-1) / float64(n) * 4 * float64(r.params)
				arMs := 1e3 * bytes * 8 / (gbps * 1e9)
				row = append(row, fmt.Sprintf("%.1f %%", 100*r.computeMs/(r.computeMs+arMs)))
			}
			cells = append(cells, row)
		}
	}
	return table{Machine: machine, Head: head, Rows: cells}
}
