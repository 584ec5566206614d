package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"time"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/dist"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/optim"
	"github.com/vitgo/vit/train"
)

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
// times of TINY and SMALL at batch 128 on 2 threads from the README's
// Performance table (`go run ./experiments/bench`: 1,913 and 299 img/s).
var defaultModelRows = []modelRow{
	{"TINY (d64 L4 h4, 28 px)", 205066, 1e3 * 128 / 1913},
	{"SMALL (d192 L6 h3, 28 px)", 2684554, 1e3 * 128 / 299},
}

// modelRow is one model of the paper model: its parameters and the step
// time of one node (one rank × 2 threads on this machine).
type modelRow struct {
	name      string
	params    int
	computeMs float64
}

// result is one run's measurement, printed by rank 0 as JSON.
type result struct {
	Name      string    `json:"name"`
	Params    int       `json:"params"`
	Ranks     int       `json:"ranks"`
	StepMs    []float64 `json:"step_ms"` // mean step time of each rank
	Share     []float64 `json:"share"`   // all-reduce time over step time, each rank
	BareMs    float64   `json:"bare_ms"` // one all-reduce of the gradients after a barrier (rank 0)
	ComputeMs float64   `json:"-"`       // filled by the parent: the one-rank step
}

func child(name string, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("child", flag.ContinueOnError)
	threads := fs.Int("threads", 1, "GOMAXPROCS of each rank")
	steps := fs.Int("steps", 8, "timed steps")
	if err := fs.Parse(args); err != nil {
		return err
	}
	runtime.GOMAXPROCS(*threads)
	c := benchConfigs[name]
	comm, err := dist.Init()
	if err != nil {
		return err
	}
	defer dist.Finalize()

	mc := layers.DefaultConfig()
	mc.ImgSize, mc.PatchSize, mc.InChans, mc.NumClasses = layers.Size2{c.Img, c.Img}, c.Patch, c.Chans, 10
	mc.EmbedDim, mc.Depth, mc.NumHeads, mc.MLPRatio = c.Dim, c.Depth, c.Heads, 4
	m, err := layers.New(mc, tensor.Float32, 1)
	if err != nil {
		return err
	}
	step, err := train.NewStep(m, train.StepConfig{Batch: c.Batch, Seed: 1, Optim: optim.DefaultConfig(),
		StepsPerEpoch: 100, TotalSteps: 100, Comm: comm})
	if err != nil {
		return err
	}
	defer step.Close()

	// This rank's rows of one fixed random global batch.
	rows, err := data.Slice(c.Batch, comm.Rank(), comm.Size())
	if err != nil {
		return err
	}
	size := c.Chans * c.Img * c.Img
	x := make([]float32, len(rows)*size)
	tgt := make([]float32, len(rows)*10)
	for i, p := range rows {
		rng := rand.New(rand.NewPCG(uint64(p), 7))
		for k := range size {
			x[i*size+k] = float32(rng.NormFloat64())
		}
		tgt[i*10+rng.IntN(10)] = 1
	}
	var total, reduce time.Duration
	for s := 0; s < 2+*steps; s++ {
		start := time.Now()
		st, err := step.Take(x, tgt, s)
		if err != nil {
			return err
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
			return err
		}
		start := time.Now()
		if err := comm.AllreduceFloat32(buf); err != nil {
			return err
		}
		bare += time.Since(start)
	}

	n := comm.Size()
	stats := make([]float64, 2*n)
	stats[comm.Rank()] = total.Seconds() * 1e3 / float64(*steps)
	stats[n+comm.Rank()] = reduce.Seconds() / total.Seconds()
	if err := comm.AllreduceFloat64(stats); err != nil {
		return err
	}
	if comm.Rank() != 0 {
		return nil
	}
	return json.NewEncoder(out).Encode(result{Name: c.label(), Params: m.NumParams(), Ranks: n,
		StepMs: stats[:n], Share: stats[n:], BareMs: bare.Seconds() * 1e3 / 3})
}
