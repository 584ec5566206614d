// Command token_cost counts what a ViT's token count costs: for 28×28 and
// 224×224 inputs and the patch sizes that tile them, the tokens, the
// attention-score elements, the forward FLOPs of each matrix product (patch
// projection, qkv, QKᵀ, PV, attention projection, MLP, head) for one fixed
// width, and the measured time of a training step.
//
//	go run ./experiments/token_cost
package main

import (
	_ "embed"
	"flag"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/vitgo/vit/experiments/internal/harness"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/train"
)

//go:embed readme.md.tmpl
var readme string

var flags struct {
	w                 width
	batch28, batch224 int
	seed              uint64
}

var experiment = harness.Experiment[results]{
	Name:   "token_cost",
	Readme: readme,
	Flags: func(fs *flag.FlagSet) {
		fs.IntVar(&flags.w.Dim, "dim", 192, "embed_dim D")
		fs.IntVar(&flags.w.Depth, "depth", 6, "depth L")
		fs.IntVar(&flags.w.Heads, "heads", 3, "num_heads H")
		fs.Float64Var(&flags.w.MLP, "mlp", 4, "mlp_ratio")
		fs.IntVar(&flags.batch28, "batch28", 16, "training-step batch for 28×28 inputs")
		fs.IntVar(&flags.batch224, "batch224", 4, "training-step batch for 224×224 inputs")
		fs.IntVar(&flags.w.Steps, "steps", 5, "timed training steps per case (the fastest is reported), after one warm-up step")
		fs.Uint64Var(&flags.seed, "seed", 0, "seeds the weights and the random batch")
		fs.BoolVar(&flags.w.Measure, "measure", true, "time training steps (false: FLOP counts only)")
	},
	Measure: measure,
	Plot:    func(r results, dir string) error { return plotCost(r.Rows, r.W, filepath.Join(dir, "token_cost.png")) },
}

func main() { harness.Main(experiment) }

// width is the model every case shares, and the timing budget.
type width struct {
	Dim, Depth, Heads int
	MLP               float64
	Steps             int
	Measure           bool
}

// results are the cases.
type results struct {
	W    width
	Rows []row
}

// cases are the inputs and the patch sizes that tile them.
var cases = []struct {
	size, chans, classes int
	patches              []int
}{
	{28, 1, 10, []int{2, 4, 7, 14}},
	{224, 3, 1000, []int{8, 14, 16, 32}},
}

// row is one (input size, patch size) case.
type row struct {
	Cfg    shape
	Batch  int
	Flops  harness.Flops
	StepMs float64 // per image; 0 when not measured
}

// shape is the part of a case's layers.Config the table shows.
type shape struct {
	ImgSize                             layers.Size2
	PatchSize, InChans, NumHeads, Depth int
}

// Tokens is the case's token count T.
func (r row) Tokens() int { gh, gw := r.grid(); return gh*gw + 1 }

// Grid is the case's patch grid, rows×columns.
func (r row) Grid() string { gh, gw := r.grid(); return fmt.Sprintf("%dx%d", gh, gw) }

func (r row) grid() (int, int) {
	return r.Cfg.ImgSize[0] / r.Cfg.PatchSize, r.Cfg.ImgSize[1] / r.Cfg.PatchSize
}

func measure(e *harness.Env) (results, error) {
	o := flags.w
	res := results{W: o}
	for _, cs := range cases {
		for _, p := range cs.patches {
			c := layers.DefaultConfig()
			c.ImgSize, c.PatchSize, c.InChans, c.NumClasses = layers.Size2{cs.size, cs.size}, p, cs.chans, cs.classes
			c.EmbedDim, c.Depth, c.NumHeads, c.MLPRatio = o.Dim, o.Depth, o.Heads, o.MLP
			if err := c.Validate(); err != nil {
				return res, err
			}
			r := row{Cfg: shape{c.ImgSize, c.PatchSize, c.InChans, c.NumHeads, c.Depth}, Batch: flags.batch28, Flops: harness.ForwardFLOPs(c)}
			if cs.size != 28 {
				r.Batch = flags.batch224
			}
			if o.Measure {
				d, err := stepTime(c, r.Batch, o.Steps, flags.seed)
				if err != nil {
					return res, fmt.Errorf("%v p%d: %w", c.ImgSize, p, err)
				}
				r.StepMs = float64(d.Microseconds()) / 1000 / float64(r.Batch)
				e.Log.Infof("%v p%d: T=%d, %.2f ms/image", c.ImgSize, p, r.Tokens(), r.StepMs)
			}
			res.Rows = append(res.Rows, r)
		}
	}
	return res, nil
}

// GFLOPs is achieved training throughput, counting a step as 3× the forward
// FLOPs (backward ≈ 2× forward).
func (r row) GFLOPs() float64 {
	if r.StepMs == 0 {
		return 0
	}
	return 3 * r.Flops.Total() / (r.StepMs / 1000) / 1e9
}

// Hidden, Linear and Crossover are the prose's derived numbers: the MLP
// width, the per-token cost in units of T·D², and the token count where the
// T² parts reach half of a block's cost.
func (w width) Hidden() int        { return int(float64(w.Dim) * w.MLP) }
func (w width) Linear() float64    { return 8 + 4*w.MLP }
func (w width) Crossover() float64 { return 2 + w.MLP }
func (w width) CrossoverT() string { return fmt.Sprintf("%.0f", (2+w.MLP)*float64(w.Dim)) }

// byTokens returns the rows sorted by token count (stable).
func byTokens(rows []row) []row {
	s := append([]row(nil), rows...)
	sort.SliceStable(s, func(i, j int) bool { return s[i].Tokens() < s[j].Tokens() })
	return s
}

// stepTime measures one training step of the model as train.Run takes it
// (train.Step: forward, soft-target cross entropy, backward, gradient
// clipping, the finite checks, the AdamW update) on random images and
// labels, float32: the fastest of steps timed steps after one warm-up step
// (the least disturbed by other processes on a shared machine).
func stepTime(c layers.Config, batch, steps int, seed uint64) (time.Duration, error) {
	step, _, err := harness.NewStep(c, batch, seed, train.StepConfig{LR: func(int) float64 { return 1e-4 }})
	if err != nil {
		return 0, err
	}
	defer step.Close()
	in, tgt := harness.RandomBatch(rand.New(rand.NewPCG(seed, 3)), batch, c.InChans*c.ImgSize[0]*c.ImgSize[1], c.NumClasses,
		(*rand.Rand).NormFloat64)
	var ts []time.Duration
	for s := 0; s <= steps; s++ {
		t0 := time.Now()
		if _, err := step.Take(in, tgt, s); err != nil {
			return 0, err
		}
		if s > 0 {
			ts = append(ts, time.Since(t0))
		}
	}
	return slices.Min(ts), nil
}
