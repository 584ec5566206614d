package evaluate

import (
	"context"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/checkpoint"
	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/internal/memory"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/memest"
)

// DefaultBatchSize is the evaluation batch when Loader.BatchSize is 0 (the
// trainer's default train.batch_size).
const DefaultBatchSize = 128

// Options say which checkpoint Checkpoint evaluates, on what and how.
type Options struct {
	Checkpoint string        // a model .safetensors of ours
	Loader     *Loader       // the validation split and its loading; nil = the checkpoint's data set with defaults
	ImgSize    *layers.Size2 // evaluate at another size, pos_embed resampled; nil = the checkpoint's
	Interp     string        // pos_embed resampling: bicubic (default) | bilinear
	EMA        bool          // use the EMA weights from the sibling training-state file (checkpoint.LoadEMA)
	// Precision is the arithmetic of the graph's matrix products: fp32
	// (default, also ""), bf16 or int8 (graph.Precision).
	Precision graph.Precision
	// OnBatch, if not nil, sees each batch's dataset indices, labels and
	// logits (a predictions writer).
	OnBatch func(idx, labels []int, logits []float32) error
}

// Loader says which validation split to evaluate on and how to load it, as
// a run config's data, augment and train sections do for the trainer's
// evaluation.
type Loader struct {
	Data      data.Config        // the data set and its loading (workers, prefetch); zero fields are defaults
	Augment   data.AugmentConfig // only what applies in evaluation (the resize interpolation)
	BatchSize int                // images per batch; 0 = DefaultBatchSize
	Seed      uint64             // the loader's seed
	Threads   int                // the threads the memory estimate assumes; 0 = every core
}

// batch is l's batch size.
func (l Loader) batch() int {
	if l.BatchSize > 0 {
		return l.BatchSize
	}
	return DefaultBatchSize
}

// Config is the data loader's configuration for evaluating a model of
// config m, normalising with mean and std.
func (l Loader) Config(m layers.Config, mean, std []float64) data.LoaderConfig {
	return data.LoaderConfig{
		BatchSize: l.batch(), ImgH: m.ImgSize[0], ImgW: m.ImgSize[1], Seed: l.Seed,
		Workers: l.Data.Workers, Prefetch: l.Data.Prefetch, Augment: l.Augment, NumClasses: m.NumClasses, Mean: mean, Std: std,
	}
}

// Open opens l's validation split for a model of config m, normalising
// with mean and std (nil: the data set's own).
func (l Loader) Open(m layers.Config, mean, std []float64) (*data.Loader, error) {
	ds, err := data.Open(l.Data.WithDefaults(), data.Val, m.InChans)
	if err != nil {
		return nil, err
	}
	if len(mean) == 0 {
		mean, std = ds.Norm()
	}
	return data.NewLoader(ds, l.Config(m, mean, std))
}

// Checkpoint loads a checkpoint (model config, normalization and class
// names from its metadata) and evaluates it on a data set's validation
// split. When ctx is cancelled the error wraps ErrInterrupted.
func Checkpoint(ctx context.Context, o Options) (Result, checkpoint.ModelMeta, []string, error) {
	m, meta, notes, err := checkpoint.LoadModel(o.Checkpoint, tensor.Float32, o.ImgSize, o.Interp)
	if err != nil {
		return Result{}, meta, nil, err
	}
	if o.EMA {
		// At another -img-size the EMA's pos_embed is resampled from the
		// file's grid as the plain weights' was.
		gh, gw := meta.Model.Grid()
		if err := checkpoint.LoadEMA(m, o.Checkpoint, checkpoint.LoadOptions{Interp: o.Interp, OldGrid: [2]int{gh, gw}}); err != nil {
			return Result{}, meta, nil, err
		}
		notes = append(notes, "EMA weights")
	}
	l := Loader{Data: data.DefaultConfig(), Augment: data.DefaultAugmentConfig()}
	if o.Loader != nil {
		l = *o.Loader
	} else if meta.Dataset != "" {
		l.Data.Name = data.DatasetName(meta.Dataset)
	}
	spec := memest.Spec{Model: m.Config, Data: l.Data.WithDefaults(), EvalBatch: l.batch(), Threads: l.Threads}
	if err := memory.CheckMachine(memest.Of(spec)); err != nil {
		return Result{}, meta, nil, err
	}
	loader, err := l.Open(m.Config, meta.Mean, meta.Std)
	if err != nil {
		return Result{}, meta, nil, err
	}
	// Labels are indexes into the data set's classes, outputs into the
	// checkpoint's: they must be one list.
	if err := checkpoint.CheckClasses(o.Checkpoint, meta.Classes, loader.Dataset().Classes()); err != nil {
		return Result{}, meta, nil, err
	}
	ev, err := checkpointEvaluator(m, l.batch(), o.Precision)
	if err != nil {
		return Result{}, meta, nil, err
	}
	defer ev.Close()
	r, err := ev.Run(ctx, loader, o.OnBatch)
	if err != nil {
		return Result{}, meta, nil, err
	}
	return r, meta, notes, nil
}

// checkpointEvaluator is the evaluator of a checkpoint's weights, which no
// longer change. In int8 it is a Frozen graph (the only kind that has
// int8). In bf16 it is a Frozen graph (packed weights, fused
// epilogues: faster), whose logits are the evaluation graph's bit for bit
// because each bf16 product is defined element by element. In fp32 it is
// the trainer's evaluation graph: there a Frozen graph's packed products
// may round differently from the BLAS the training run validated with (an
// OpenBLAS build does), and cmd/eval gives the run's own numbers.
func checkpointEvaluator(m *layers.VisionTransformer, batch int, prec graph.Precision) (*Evaluator, error) {
	if prec == graph.INT8 { // m serves this evaluation only: it keeps the quantized weights alone
		if err := m.ReleaseFloatWeights(prec); err != nil {
			return nil, err
		}
	}
	if prec == graph.BF16 || prec == graph.INT8 {
		return NewFrozenIn(m, batch, graph.NewArena(), WithPrecision(prec))
	}
	return New(m, batch, WithPrecision(prec))
}
