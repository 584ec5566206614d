package train

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/sirupsen/logrus"
	G "gorgonia.org/gorgonia"

	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/layers"
)

// ErrEvalInterrupted is returned by an evaluation whose context was
// cancelled (SIGINT, SIGTERM) before it saw every image.
var ErrEvalInterrupted = errors.New("evaluation interrupted")

// EvalResult is a model's score on a data set: every image counted, the
// remainder batch included.
type EvalResult struct {
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
	model *layers.VisionTransformer
	g     *layers.Graph
	vm    G.VM
}

// NewEvaluator builds the evaluation graph for batch images, its
// activations planned into an arena of its own.
func NewEvaluator(m *layers.VisionTransformer, batch int) (*Evaluator, error) {
	return NewEvaluatorIn(m, batch, graph.NewArena())
}

// NewEvaluatorIn is NewEvaluator with the activations planned into arena,
// which a training graph may share: the logits (and features) of one call
// stay valid until the next run of any graph in the arena.
func NewEvaluatorIn(m *layers.VisionTransformer, batch int, arena *graph.Arena) (*Evaluator, error) {
	g, err := m.Build(batch, layers.BuildOptions{})
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
// each batch's dataset indices, labels and logits. An image whose logits hold
// a NaN or an infinity has no prediction: it counts as wrong in top-1, top-5
// and its class's accuracy, is left out of the confusion matrix, and is
// counted in NonFinite (the mean loss is then NaN). When ctx is cancelled the
// evaluation stops within a batch and the error wraps ErrEvalInterrupted.
func (e *Evaluator) Run(ctx context.Context, l *data.Loader, onBatch func(idx, labels []int, logits []float32) error) (EvalResult, error) {
	c := e.model.Config.NumClasses
	r := EvalResult{Confusion: make([][]int, c), PerClass: make([]float64, c)}
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
			return EvalResult{}, fmt.Errorf("%w after %d images: %w", ErrEvalInterrupted, r.Images, err)
		}
		b, ok, err := it.Next()
		if err != nil {
			return EvalResult{}, err
		}
		if !ok {
			break
		}
		if b.N > e.g.Batch {
			return EvalResult{}, fmt.Errorf("eval: batch of %d exceeds the graph's %d", b.N, e.g.Batch)
		}
		logits, err := e.Logits(b.X, b.N)
		if err != nil {
			return EvalResult{}, err
		}
		for i := 0; i < b.N; i++ {
			row, y := logits[i*c:(i+1)*c], b.Labels[i]
			perLabel[y]++
			lossSum += crossEntropy(row, y)
			pred, rank := rankOf(row, y)
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
				return EvalResult{}, err
			}
		}
		r.Images += b.N
		b.Release()
	}
	if r.Images == 0 {
		return EvalResult{}, fmt.Errorf("eval: the data set is empty")
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

// rankOf returns a logit row's prediction (its arg max, the first of ties)
// and the rank of label y (how many classes beat it; ties go to the lower
// index). A row holding a NaN or an infinity has no prediction: pred is -1.
func rankOf(row []float32, y int) (pred, rank int) {
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
func (r EvalResult) Warning() string {
	if r.NonFinite == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d images had non-finite logits (NaN or Inf); they are counted as wrong", r.NonFinite, r.Images)
}

// warnNonFinite logs r's Warning, if any, for the evaluation called what.
func warnNonFinite(log *logrus.Logger, what string, r EvalResult) {
	if msg := r.Warning(); msg != "" {
		log.Warnf("%s: %s", what, msg)
	}
}

// MarshalJSON writes a non-finite loss (or speed) as null: JSON has no NaN.
func (r EvalResult) MarshalJSON() ([]byte, error) {
	type plain EvalResult
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
func (e *Evaluator) RunWith(ctx context.Context, l *data.Loader, weights map[string][]float32) (EvalResult, error) {
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
