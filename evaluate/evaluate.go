package evaluate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	G "gorgonia.org/gorgonia"

	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/dist"
	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/layers"
)

// ErrInterrupted is returned by an evaluation whose context was
// cancelled (SIGINT, SIGTERM) before it saw every image.
var ErrInterrupted = errors.New("evaluation interrupted")

// Result is a model's score on a data set: every image counted, the
// remainder batch included.
type Result struct {
	Top1      float64   `json:"top1"` // fractions
	Top5      float64   `json:"top5"`
	Loss      float64   `json:"loss"` // mean cross entropy against the hard labels
	Images    int       `json:"images"`
	NonFinite int       `json:"non_finite"` // images whose logits held a NaN or an infinity (counted as wrong)
	ImgPerS   float64   `json:"img_per_s"`
	PerClass  []float64 `json:"per_class"` // top-1 accuracy of each class (NaN-free: 0 for an absent class)
	Confusion [][]int   `json:"confusion"` // [label][prediction] counts; images without a prediction (NonFinite) are left out
}

// Evaluator runs a model's forward graph for a fixed batch size in eval mode
// (no dropout, no drop path). A short last batch is zero-padded; padded rows
// are ignored, and since every row is computed independently they change
// nothing else.
type Evaluator struct {
	// Comm shards Run over ranks (nil: one process): each rank evaluates
	// the batches its loader yields (data.LoaderConfig Rank and Ranks must
	// match), and the counts and per-image losses are all-reduced, so every
	// rank gets the one-process result exactly.
	Comm dist.Comm

	model *layers.VisionTransformer
	g     *layers.Graph
	vm    G.VM
}

// An Option sets a property of an Evaluator's graph.
type Option func(*layers.BuildOptions)

// WithPrecision builds the graph's matrix products in precision p
// (layers.BuildOptions.Precision; default fp32).
func WithPrecision(p graph.Precision) Option {
	return func(o *layers.BuildOptions) { o.Precision = p }
}

// New builds the evaluation graph for batch images, its
// activations planned into an arena of its own. Its attention keeps no
// maps (layers.BuildOptions.NoMaps: no batch·heads·tokens² floats per
// block); NewMaps keeps them.
func New(m *layers.VisionTransformer, batch int, opts ...Option) (*Evaluator, error) {
	return NewIn(m, batch, graph.NewArena(), opts...)
}

// NewIn is New with the activations planned into arena,
// which a training graph may share: the logits (and features) of one call
// stay valid until the next run of any graph in the arena.
func NewIn(m *layers.VisionTransformer, batch int, arena *graph.Arena, opts ...Option) (*Evaluator, error) {
	return newEvaluator(m, batch, arena, layers.BuildOptions{NoMaps: true}, opts)
}

// NewMaps is New on a graph whose attention keeps its
// maps, for graph.AttentionProbs on Graph().Attn after a run (attention
// rollout, figures): it holds batch·heads·tokens² floats per block more.
func NewMaps(m *layers.VisionTransformer, batch int, opts ...Option) (*Evaluator, error) {
	return newEvaluator(m, batch, graph.NewArena(), layers.BuildOptions{}, opts)
}

// NewFrozenIn is NewIn on a Frozen graph
// (layers.BuildOptions.Frozen): faster, for serving a model whose weights
// no longer change; it computes with the weights the model had at its first
// Frozen build, and its graph keeps no attention maps.
func NewFrozenIn(m *layers.VisionTransformer, batch int, arena *graph.Arena, opts ...Option) (*Evaluator, error) {
	return newEvaluator(m, batch, arena, layers.BuildOptions{Frozen: true}, opts)
}

func newEvaluator(m *layers.VisionTransformer, batch int, arena *graph.Arena, bo layers.BuildOptions, opts []Option) (*Evaluator, error) {
	for _, o := range opts {
		o(&bo)
	}
	g, err := m.Build(batch, bo)
	if err != nil {
		return nil, err
	}
	if _, err := graph.PlanBuffers(g.G, arena, g.Logits, g.Features); err != nil {
		return nil, err
	}
	return &Evaluator{model: m, g: g, vm: G.NewTapeMachine(g.G)}, nil
}

// Close releases the machine.
func (e *Evaluator) Close() { e.vm.Close() }

// Logits runs one padded batch and returns (n, classes) logits; the slice is
// reused by the next call.
func (e *Evaluator) Logits(x []float32, n int) ([]float32, error) {
	in := e.g.Input.Value().Data().([]float32)
	copy(in, x)
	clear(in[len(x):])
	defer e.vm.Reset()
	if err := e.vm.RunAll(); err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	c := e.model.Config.NumClasses
	return e.g.Logits.Value().Data().([]float32)[:n*c], nil
}

// Graph is the evaluation graph (for attention maps).
func (e *Evaluator) Graph() *layers.Graph { return e.g }

// Run evaluates every image the loader yields. onBatch, if not nil, sees
// each batch's dataset indices, labels and logits (on several ranks, the
// batches of this rank). An image whose logits hold a NaN or an infinity has
// no prediction: it counts as wrong in top-1, top-5 and its class's
// accuracy, is left out of the confusion matrix, and is counted in NonFinite
// (the mean loss is then NaN). When ctx is cancelled the evaluation stops
// before the next batch and the error wraps ErrInterrupted.
func (e *Evaluator) Run(ctx context.Context, l *data.Loader, onBatch func(idx, labels []int, logits []float32) error) (Result, error) {
	c := e.model.Config.NumClasses
	sh, err := newEvalShard(e.Comm, l)
	if err != nil {
		return Result{}, err
	}
	r := Result{Confusion: make([][]int, c), PerClass: make([]float64, c)}
	for i := range r.Confusion {
		r.Confusion[i] = make([]int, c)
	}
	perLabel := make([]int, c)
	start := time.Now()
	it := l.Epoch(0, 0)
	defer it.Close()
	var lossSum float64
	var top1, top5 int
	for {
		if err := ctx.Err(); err != nil {
			return Result{}, fmt.Errorf("%w after %d images: %w", ErrInterrupted, r.Images, err)
		}
		b, ok, err := it.Next()
		if err != nil {
			return Result{}, err
		}
		if !ok {
			break
		}
		if b.N > e.g.Batch {
			return Result{}, fmt.Errorf("eval: batch of %d exceeds the graph's %d", b.N, e.g.Batch)
		}
		logits, err := e.Logits(b.X, b.N)
		if err != nil {
			return Result{}, err
		}
		for i := 0; i < b.N; i++ {
			row, y := logits[i*c:(i+1)*c], b.Labels[i]
			if sh != nil {
				sh.losses[b.Step*sh.batch+i] = crossEntropy(row, y)
			} else {
				lossSum += crossEntropy(row, y)
			}
			perLabel[y]++
			pred, rank := RankOf(row, y)
			if pred < 0 {
				r.NonFinite++
				continue
			}
			if rank == 0 {
				top1++
			}
			if rank < 5 {
				top5++
			}
			r.Confusion[y][pred]++
		}
		if onBatch != nil {
			if err := onBatch(b.Indices, b.Labels, logits); err != nil {
				return Result{}, err
			}
		}
		r.Images += b.N
		b.Release()
	}
	if sh != nil {
		if lossSum, err = sh.reduce(&r, &top1, &top5, perLabel); err != nil {
			return Result{}, err
		}
	}
	if r.Images == 0 {
		return Result{}, fmt.Errorf("eval: the data set is empty")
	}
	n := float64(r.Images)
	r.Top1, r.Top5, r.Loss = float64(top1)/n, float64(top5)/n, lossSum/n
	r.ImgPerS = n / time.Since(start).Seconds()
	for y, total := range perLabel {
		if total > 0 {
			r.PerClass[y] = float64(r.Confusion[y][y]) / float64(total)
		}
	}
	return r, nil
}

// RankOf returns a logit row's prediction (its arg max, the first of ties)
// and the rank of label y (how many classes beat it; ties go to the lower
// index). A row holding a NaN or an infinity has no prediction: pred is -1.
func RankOf(row []float32, y int) (pred, rank int) {
	for j, v := range row {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return -1, len(row)
		}
		if v > row[y] || (v == row[y] && j < y) {
			rank++
		}
		if v > row[pred] {
			pred = j
		}
	}
	return pred, rank
}

// Warning returns a one-line warning when some images had non-finite logits,
// or "" when none had.
func (r Result) Warning() string {
	if r.NonFinite == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d images had non-finite logits (NaN or Inf); they are counted as wrong", r.NonFinite, r.Images)
}

// MarshalJSON writes a non-finite loss (or speed) as null: JSON has no NaN.
func (r Result) MarshalJSON() ([]byte, error) {
	type plain Result
	finite := func(v float64) *float64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return &v
	}
	return json.Marshal(struct {
		plain
		Loss    *float64 `json:"loss"`
		ImgPerS *float64 `json:"img_per_s"`
	}{plain(r), finite(r.Loss), finite(r.ImgPerS)})
}

// RunWith evaluates with other weights (the EMA's) swapped in by name, then
// restores the model's own.
func (e *Evaluator) RunWith(ctx context.Context, l *data.Loader, weights map[string][]float32) (Result, error) {
	if err := e.model.CheckFloatWeights(); err != nil {
		return Result{}, fmt.Errorf("eval: %w", err)
	}
	saved := map[string][]float32{}
	for _, p := range e.model.Params {
		w, ok := weights[p.Name]
		if !ok {
			continue
		}
		d := p.Value.Data().([]float32)
		saved[p.Name] = append([]float32(nil), d...)
		copy(d, w)
	}
	defer func() {
		for _, p := range e.model.Params {
			if s, ok := saved[p.Name]; ok {
				copy(p.Value.Data().([]float32), s)
			}
		}
	}()
	return e.Run(ctx, l, nil)
}

// crossEntropy is −log softmax(row)[y], computed stably in float64.
func crossEntropy(row []float32, y int) float64 {
	mx := math.Inf(-1)
	for _, v := range row {
		mx = math.Max(mx, float64(v))
	}
	var s float64
	for _, v := range row {
		s += math.Exp(float64(v) - mx)
	}
	return mx + math.Log(s) - float64(row[y])
}

// evalShard gathers a sharded evaluation: each image's loss in its place in
// the data set's order, so that the sum is taken in one process's order.
type evalShard struct {
	comm   dist.Comm
	batch  int
	losses []float64
}

// newEvalShard returns nil for one process.
func newEvalShard(c dist.Comm, l *data.Loader) (*evalShard, error) {
	lc := l.Config()
	ranks := max(lc.Ranks, 1)
	if c == nil || c.Size() == 1 {
		if ranks > 1 {
			return nil, fmt.Errorf("eval: the loader is rank %d of %d but the evaluator has no communicator", lc.Rank, ranks)
		}
		return nil, nil
	}
	if ranks != c.Size() || lc.Rank != c.Rank() {
		return nil, fmt.Errorf("eval: the loader is rank %d of %d, the communicator rank %d of %d", lc.Rank, ranks, c.Rank(), c.Size())
	}
	return &evalShard{comm: c, batch: lc.BatchSize, losses: make([]float64, l.Dataset().Len())}, nil
}

// reduce all-reduces the counts into r, top1, top5 and perLabel and returns
// the sum of the losses in data set order. Each loss slot is written by one
// rank and is zero on the others, so the reduced values are exact.
func (s *evalShard) reduce(r *Result, top1, top5 *int, perLabel []int) (float64, error) {
	counts := []int64{int64(r.Images), int64(*top1), int64(*top5), int64(r.NonFinite)}
	for _, n := range perLabel {
		counts = append(counts, int64(n))
	}
	for _, row := range r.Confusion {
		for _, v := range row {
			counts = append(counts, int64(v))
		}
	}
	if err := s.comm.AllreduceInt64(counts); err != nil {
		return 0, fmt.Errorf("eval: %w", err)
	}
	if err := s.comm.AllreduceFloat64(s.losses); err != nil {
		return 0, fmt.Errorf("eval: %w", err)
	}
	r.Images, *top1, *top5, r.NonFinite = int(counts[0]), int(counts[1]), int(counts[2]), int(counts[3])
	k := 4
	for y := range perLabel {
		perLabel[y] = int(counts[k])
		k++
	}
	for _, row := range r.Confusion {
		for j := range row {
			row[j] = int(counts[k])
			k++
		}
	}
	var sum float64
	for _, v := range s.losses {
		sum += v
	}
	return sum, nil
}
