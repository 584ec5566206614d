package train

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/sirupsen/logrus"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/checkpoint"
	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/dist"
	"github.com/vitgo/vit/evaluate"
	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/internal/atomicfile"
	"github.com/vitgo/vit/internal/memory"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/report"
)

// ErrInterrupted is returned by Run when its context is cancelled (SIGINT,
// SIGTERM): the current step was finished and a checkpoint written.
var ErrInterrupted = errors.New("training interrupted")

// Options are the run's non-config knobs.
type Options struct {
	Resume    bool                   // continue from out_dir's last checkpoint
	Overwrite bool                   // delete an earlier run's files from out_dir and start afresh
	Log       *logrus.Logger         // nil = logrus.StandardLogger()
	Progress  *report.ProgressWriter // nil = no progress bar
	// Comm makes the run one rank of a data-parallel job (nil: one
	// process). Rank 0 initialises or resumes and shares the state; every
	// rank trains on its share of each batch and evaluates its share of the
	// validation set; only rank 0 writes files, logs below warning level
	// and draws the progress bar.
	Comm dist.Comm

	// onStep, for tests, sees each step: the run, the batch it trained on
	// and what the step reported.
	onStep func(r *run, b *data.Batch, s StepStats)
}

// Result summarises a finished run.
type Result struct {
	Steps    int
	Epochs   int
	Last     evaluate.Result // validation of the final weights
	LastEMA  *evaluate.Result
	BestTop1 float64
	OutDir   string
}

// The files a run leaves in its output directory.
const (
	ConfigFile   = "config.yaml"
	MetricsFile  = "metrics.csv"
	LastModel    = "last.safetensors"
	LastState    = "last.train.safetensors"
	LastEMAModel = "last_ema.safetensors"
	BestModel    = "best.safetensors"
	CurvesFile   = "curves.png"
	epochPattern = "epoch_%d.safetensors"
)

// Run trains a ViT as cfg says: nanoGPT's loop with timm's recipe.
//
//  1. prepare: data, model (fine-tuned from a file, or fresh), the training
//     step and the evaluator, resumed or started afresh in out_dir;
//  2. for each epoch, for each batch: [Step.Take] (forward, backward, clip,
//     AdamW, EMA), log, a checkpoint every checkpoint.every_steps and on a
//     cancelled ctx (then ErrInterrupted);
//  3. at the end of each epoch and of the run: evaluate, metrics.csv,
//     checkpoints, curves.png.
//
// A non-finite loss, gradient or weight stops the run with a
// *NonFiniteError (errors.As), the last good checkpoint kept.
func Run(ctx context.Context, cfg Config, opts Options) (*Result, error) {
	cfg = cfg.WithDefaults()
	r, err := prepare(cfg, opts)
	if err != nil {
		return nil, err
	}
	defer r.close()
	st := &r.st
	r.log.Infof("training %s: %d parameters, %d steps/epoch × %d epochs, batch %d, %d rank(s) × %d threads",
		r.trainSet.Name(), r.model.NumParams(), r.spe, cfg.Train.Epochs, cfg.Train.BatchSize, r.comm.Size(), runtime.GOMAXPROCS(0))
	for st.Epoch < cfg.Train.Epochs {
		if err := r.trainEpoch(ctx); err != nil {
			return nil, err
		}
		last, err := r.endEpoch(ctx)
		if err != nil {
			return nil, err
		}
		if last {
			break
		}
	}
	res := r.res
	res.Steps, res.Epochs, res.BestTop1, res.OutDir = st.Step, st.Epoch, st.BestTop1, r.out
	return &res, nil
}

// trainEpoch takes the steps of the current epoch until it ends or
// train.max_steps is reached: batch → step → log → checkpoint. A cancelled
// ctx writes a checkpoint and returns ErrInterrupted.
func (r *run) trainEpoch(ctx context.Context) error {
	cfg, st := r.cfg, &r.st
	r.epochStart, r.epochImgs = time.Now(), 0
	r.rowStart, r.rowImgs = r.epochStart, 0
	it := r.loader.Epoch(st.Epoch, st.EpochStep)
	defer it.Close()
	for !r.maxed() {
		b, ok, err := it.Next()
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		s, err := r.step.Take(b.X, b.Targets, st.Step)
		if err != nil {
			if nf := (*NonFiniteError)(nil); errors.As(err, &nf) {
				return fmt.Errorf("%w; the last good checkpoint is kept in %s", err, r.out)
			}
			return err
		}
		st.Step++
		st.EpochStep++
		st.LossSum += s.Loss
		st.NormSum += s.GradNorm
		r.epochImgs += b.N * r.comm.Size()
		r.rowImgs += b.N * r.comm.Size()
		if r.opts.onStep != nil {
			r.opts.onStep(r, b, s)
		}
		b.Release()
		ips := float64(r.epochImgs) / time.Since(r.epochStart).Seconds()
		if r.opts.Progress != nil {
			r.opts.Progress.Update(report.Progress{Epoch: st.Epoch + 1, Epochs: cfg.Train.Epochs, EpochStep: st.EpochStep, StepsPerEpoch: r.spe,
				Step: st.Step, Steps: r.runSteps(), Loss: s.Loss, LR: s.LR, ImgPerS: ips})
		}
		if st.Step%cfg.Train.LogEvery == 0 {
			if err := r.logStep(s); err != nil {
				return err
			}
		}
		if every := cfg.Checkpoint.EverySteps; every > 0 && st.Step%every == 0 && st.EpochStep < r.spe {
			if err := r.save(); err != nil {
				return err
			}
		}
		stop, err := stopAll(r.comm, ctx.Err() != nil)
		if err != nil {
			return err
		}
		if stop {
			if err := r.save(); err != nil {
				return err
			}
			return fmt.Errorf("%w at step %d: checkpoint written to %s", ErrInterrupted, st.Step, r.out)
		}
	}
	return nil
}

// logStep writes a steps.csv row for the step just taken, and a debug log
// line.
func (r *run) logStep(s StepStats) error {
	st := &r.st
	ips := float64(r.rowImgs) / time.Since(r.rowStart).Seconds()
	r.rowStart, r.rowImgs = time.Now(), 0
	r.log.WithFields(logrus.Fields{"epoch": st.Epoch + 1, "step": st.Step, "loss": fmt.Sprintf("%.4f", s.Loss),
		"lr": fmt.Sprintf("%.3g", s.LR), "grad_norm": fmt.Sprintf("%.3f", s.GradNorm), "img_per_s": fmt.Sprintf("%.0f", ips)}).Debug("train")
	if !r.root() {
		return nil
	}
	return r.steps.Append(report.StepRow{Step: st.Step, Epoch: st.Epoch + 1, LR: s.LR, Loss: s.Loss, GradNorm: s.GradNorm, ImgPerS: ips})
}

// runSteps is the number of steps the whole run takes.
func (r *run) runSteps() int {
	if m := r.cfg.Train.MaxSteps; m > 0 && m < r.totalSteps {
		return m
	}
	return r.totalSteps
}

// maxed reports whether train.max_steps steps are done.
func (r *run) maxed() bool { return r.cfg.Train.MaxSteps > 0 && r.st.Step >= r.cfg.Train.MaxSteps }

// endEpoch closes an epoch, or the run when max_steps stopped it early:
// evaluate (every train.eval_every epochs and at the end), append the
// metrics row, save the checkpoints and draw the curves. last reports the
// end of the run.
func (r *run) endEpoch(ctx context.Context) (last bool, err error) {
	cfg, st := r.cfg, &r.st
	before := *st // the counters of an epoch trained but not yet recorded
	if r.opts.Progress != nil {
		r.opts.Progress.Done()
	}
	row := report.MetricsRow{Step: st.Step, LR: r.step.lr(max(st.Step-1, 0)),
		ImgPerS: float64(r.epochImgs) / time.Since(r.epochStart).Seconds(), Elapsed: time.Since(r.start).Seconds()}
	if st.EpochStep > 0 {
		row.TrainLoss, row.GradNorm = st.LossSum/float64(st.EpochStep), st.NormSum/float64(st.EpochStep)
	}
	epochDone := st.EpochStep >= r.spe
	if epochDone {
		st.Epoch++
		st.EpochStep, st.LossSum, st.NormSum = 0, 0, 0
	}
	row.Epoch = st.Epoch
	last = r.maxed() || st.Epoch >= cfg.Train.Epochs
	if (epochDone && st.Epoch%cfg.Train.EvalEvery == 0) || last {
		if err := r.evaluate(ctx, &row); errors.Is(err, evaluate.ErrInterrupted) {
			return false, r.evalInterrupted(err, before)
		} else if err != nil {
			return false, err
		}
	}
	if !r.root() {
		return last, nil
	}
	if err := r.metrics.Append(row); err != nil {
		return false, err
	}
	if err := r.save(); err != nil {
		return false, err
	}
	if epochDone && cfg.Checkpoint.KeepLast > 0 {
		if err := keepLast(r.out, r.model, r.modelMeta("raw"), st.Epoch, cfg.Checkpoint.KeepLast); err != nil {
			return false, err
		}
	}
	if err := report.PlotCurves(r.metrics.Path, r.steps.Path, filepath.Join(r.out, CurvesFile)); err != nil {
		r.log.Warnf("curves: %v", err)
	}
	return last, nil
}

// evaluate scores the weights (and the EMA's) on the validation set into
// row, logs the epoch and keeps the best model.
func (r *run) evaluate(ctx context.Context, row *report.MetricsRow) error {
	if r.comm.Size() > 1 {
		// Sharded, the ranks would stop at different batches, and the
		// all-reduce at its end would wait for the ones that stopped: a
		// signal takes effect at the step boundary after the evaluation.
		ctx = context.Background()
	}
	st := &r.st
	valLoader, err := data.NewLoader(r.valSet, r.loaderConfig(false))
	if err != nil {
		return err
	}
	v, err := r.eval.Run(ctx, valLoader, nil)
	if err != nil {
		return err
	}
	warnNonFinite(r.log, "validation", v)
	row.Val, r.res.Last = &v, v
	if w := r.step.EMAWeights(); w != nil {
		ve, err := r.eval.RunWith(ctx, valLoader, w)
		if err != nil {
			return err
		}
		warnNonFinite(r.log, "EMA validation", ve)
		row.ValEMA, r.res.LastEMA = &ve, &ve
	}
	r.log.WithFields(logrus.Fields{"epoch": st.Epoch, "step": st.Step, "train_loss": fmt.Sprintf("%.4f", row.TrainLoss),
		"val_loss": fmt.Sprintf("%.4f", v.Loss), "val_top1": fmt.Sprintf("%.4f", v.Top1), "val_top5": fmt.Sprintf("%.4f", v.Top5),
		"img_per_s": fmt.Sprintf("%.0f", row.ImgPerS), "elapsed_s": fmt.Sprintf("%.0f", row.Elapsed)}).Info("epoch")
	if r.cfg.Checkpoint.SaveBest.Value() && v.Top1 > st.BestTop1 {
		st.BestTop1 = v.Top1 // on every rank: they all have the same v
		if !r.root() {
			return nil
		}
		return checkpoint.SaveModel(filepath.Join(r.out, BestModel), r.model, r.modelMeta("raw"), nil)
	}
	return nil
}

// save writes last.safetensors (and last_ema.safetensors), then the state
// file, which alone is enough to resume.
func (r *run) save() error {
	if !r.root() {
		return nil
	}
	if err := r.step.SaveTo(&r.st, r.st.Step); err != nil {
		return err
	}
	if err := checkpoint.SaveModel(filepath.Join(r.out, LastModel), r.model, r.modelMeta("raw"), nil); err != nil {
		return err
	}
	if r.st.EMA != nil {
		if err := checkpoint.SaveModel(filepath.Join(r.out, LastEMAModel), r.model, r.modelMeta("ema"), r.st.EMA); err != nil {
			return err
		}
	}
	return SaveState(filepath.Join(r.out, LastState), r.st)
}

// modelMeta is the metadata of a model file written now.
func (r *run) modelMeta(weights string) checkpoint.ModelMeta {
	m := r.meta
	m.Epoch, m.Step, m.Weights = r.st.Epoch, r.st.Step, weights
	return m
}

// run is one training run's live parts: what prepare builds and the loop
// and the end of each epoch use.
type run struct {
	cfg             Config
	opts            Options
	log             *logrus.Logger
	out             string
	trainSet        data.Dataset
	valSet          data.Dataset
	mean, std       []float64
	loader          *data.Loader
	spe, totalSteps int
	model           *layers.VisionTransformer
	step            *Step
	eval            *evaluate.Evaluator
	meta            checkpoint.ModelMeta
	st              State
	metrics         *report.MetricsLog
	steps           *report.StepsLog
	res             Result
	start           time.Time
	epochStart      time.Time // this session's part of the epoch
	epochImgs       int
	rowStart        time.Time // of the steps.csv row in progress
	rowImgs         int
	closers         []func()
	comm            dist.Comm
}

// root reports whether this is rank 0, the rank that writes.
func (r *run) root() bool { return r.comm.Rank() == 0 }

// prepare builds everything a run needs and resumes it or starts out_dir
// afresh. On error it releases what it built.
func prepare(cfg Config, opts Options) (_ *run, err error) {
	r := &run{cfg: cfg, opts: opts, log: opts.Log, out: cfg.Train.OutDir, start: time.Now(), comm: opts.Comm}
	if r.log == nil {
		r.log = logrus.StandardLogger()
	}
	if r.comm == nil {
		r.comm = dist.Single()
	}
	if !r.root() {
		r.log, r.opts.Progress = rankLog(r.log, r.comm), nil
	}
	defer func() {
		if err != nil {
			r.close()
		}
	}()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := memory.CheckMachine(EstimateMemory(cfg)); err != nil {
		return nil, err
	}
	if cfg.Train.Threads > 0 {
		runtime.GOMAXPROCS(cfg.Train.Threads)
	}
	if r.root() { // the output directory is rank 0's alone
		release, err := openOutDir(cfg, opts, r.log) // lock, clean and check it (outdir.go)
		if err != nil {
			return nil, err
		}
		r.closers = append(r.closers, release) // closed last
	}
	if err := r.openData(); err != nil {
		return nil, err
	}
	if err := r.buildModel(); err != nil {
		return nil, err
	}
	cfgYAML, err := cfg.YAML()
	if err != nil {
		return nil, err
	}
	var started error
	if r.root() {
		started = r.resumeOrStart(string(cfgYAML))
	}
	if err := shareOutcome(r.comm, started); err != nil { // every rank learns whether rank 0 starts
		return nil, err
	}
	if err := shareState(r.comm, r.step, &r.st); err != nil {
		return nil, err
	}
	if !r.root() {
		return r, nil
	}
	if err := atomicfile.WriteBytes(filepath.Join(r.out, ConfigFile), cfgYAML); err != nil {
		return nil, fmt.Errorf("write config: %w", err)
	}
	return r, nil
}

// close releases the step's and the evaluator's machines.
func (r *run) close() {
	for i := len(r.closers) - 1; i >= 0; i-- {
		r.closers[i]()
	}
	r.closers = nil
}

// openData opens the training and validation sets and the training loader.
func (r *run) openData() (err error) {
	cfg := r.cfg
	if r.trainSet, err = data.Open(cfg.Data, data.Train, cfg.Model.InChans, data.WithLogger(r.log)); err != nil {
		return err
	}
	if r.valSet, err = data.Open(cfg.Data, data.Val, cfg.Model.InChans, data.WithLogger(r.log)); err != nil {
		return err
	}
	if n := len(r.trainSet.Classes()); n > cfg.Model.NumClasses {
		return fmt.Errorf("model.num_classes: %d, but %s has %d classes", cfg.Model.NumClasses, r.trainSet.Name(), n)
	}
	r.mean, r.std = r.trainSet.Norm()
	debug.FreeOSMemory() // return the decompression buffers of loading before training starts
	if r.loader, err = data.NewLoader(r.trainSet, r.loaderConfig(true)); err != nil {
		return err
	}
	if r.spe = r.loader.StepsPerEpoch(); r.spe == 0 {
		return fmt.Errorf("train.batch_size %d is larger than the %d training images", cfg.Train.BatchSize, r.trainSet.Len())
	}
	r.totalSteps = cfg.Train.Epochs * r.spe
	if cfg.Data.Name == data.NameFolder {
		lc := r.loader.Config()
		r.log.Infof("data: %d training images in %s, %d loader workers, %d batches prefetched, JPEG decoder %s",
			r.trainSet.Len(), cfg.Data.Root, lc.Workers, lc.Prefetch, data.JPEGDecoder())
	}
	r.meta = checkpoint.ModelMeta{Dataset: r.trainSet.Name(), Mean: r.mean, Std: r.std, Classes: r.trainSet.Classes()}
	return nil
}

// buildModel makes the model (fresh, or initialised from finetune.init_from
// unless resuming), its training step and its evaluator, their activations
// planned into one arena (they never run at once).
func (r *run) buildModel() (err error) {
	cfg := r.cfg
	if r.model, err = layers.New(cfg.Model, tensor.Float32, cfg.Train.Seed); err != nil {
		return err
	}
	if cfg.Finetune.InitFrom != "" && !r.opts.Resume && r.root() { // the other ranks get rank 0's weights
		notes, err := InitFrom(r.model, cfg.Finetune)
		if err != nil {
			return err
		}
		for _, n := range notes {
			r.log.Infof("init_from: %s", n)
		}
	}
	arena := graph.NewArena()
	if r.step, err = NewStep(r.model, StepConfig{Batch: cfg.Train.BatchSize, Seed: cfg.Train.Seed, Optim: cfg.Optim,
		StepsPerEpoch: r.spe, TotalSteps: r.totalSteps, Arena: arena, Comm: r.comm, GradAccum: cfg.Train.GradAccumSteps}); err != nil {
		return err
	}
	r.closers = append(r.closers, r.step.Close)
	if r.eval, err = evaluate.NewIn(r.model, cfg.EvalBatch(), arena); err != nil {
		return err
	}
	r.closers = append(r.closers, r.eval.Close)
	r.eval.Comm = r.comm
	r.log.Debugf("activations: %d outputs planned into %.1f MiB (%.1f MiB unplanned; training graph alone)",
		r.step.tg.Plan.Planned, float64(arena.Bytes())/(1<<20), float64(r.step.tg.Plan.Bytes)/(1<<20))
	return nil
}

// resumeOrStart restores the weights, optimizer, EMA and counters from
// out_dir's state file, or starts the run's records afresh.
func (r *run) resumeOrStart(cfgYAML string) error {
	r.metrics = &report.MetricsLog{Path: filepath.Join(r.out, MetricsFile)}
	r.steps = &report.StepsLog{Path: filepath.Join(r.out, report.StepsFile)}
	r.closers = append(r.closers, func() { r.steps.Close() })
	if !r.opts.Resume {
		r.st = State{Seed: r.cfg.Train.Seed, Config: cfgYAML, BestTop1: -1}
		if err := r.steps.Create(); err != nil {
			return err
		}
		return r.metrics.Create()
	}
	statePath := filepath.Join(r.out, LastState)
	st, err := LoadState(statePath)
	if err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	if st.Weights == nil {
		return fmt.Errorf("resume %s: holds no model weights (written by an older version)", statePath)
	}
	if err := r.step.Restore(st); err != nil {
		return fmt.Errorf("resume %s: %w", statePath, err)
	}
	r.st = st
	r.st.Config = cfgYAML // differs from the stored one only in the keys openOutDir allowed
	r.log.Infof("resumed from %s (weights, optimizer, EMA) at step %d (epoch %d, step %d of it)", statePath, st.Step, st.Epoch+1, st.EpochStep)
	if err := r.steps.Resume(st.Step); err != nil {
		return err
	}
	return r.metrics.Truncate(st.Step)
}

// loaderConfig is the data loader's view of the run config: the training
// loader's, or (train false) the evaluation's (Config.EvalLoader).
func loaderConfig(cfg Config, train bool, mean, std []float64) data.LoaderConfig {
	if !train {
		return cfg.EvalLoader().Config(cfg.Model, mean, std)
	}
	return data.LoaderConfig{
		BatchSize: cfg.Train.BatchSize, ImgH: cfg.Model.ImgSize[0], ImgW: cfg.Model.ImgSize[1], Train: true,
		Seed: cfg.Train.Seed, Workers: cfg.Data.Workers, Prefetch: cfg.Data.Prefetch,
		Augment: cfg.Augment, Mixup: cfg.Mixup, NumClasses: cfg.Model.NumClasses, Mean: mean, Std: std,
	}
}

// loaderConfig is loaderConfig for this rank.
func (r *run) loaderConfig(train bool) data.LoaderConfig {
	lc := loaderConfig(r.cfg, train, r.mean, r.std)
	lc.Rank, lc.Ranks = r.comm.Rank(), r.comm.Size()
	return lc
}

// keepLast writes epoch_N.safetensors and removes those older than n epochs.
func keepLast(dir string, m *layers.VisionTransformer, meta checkpoint.ModelMeta, epoch, n int) error {
	if err := checkpoint.SaveModel(filepath.Join(dir, fmt.Sprintf(epochPattern, epoch)), m, meta, nil); err != nil {
		return err
	}
	if old := epoch - n; old >= 1 {
		if err := os.Remove(filepath.Join(dir, fmt.Sprintf(epochPattern, old))); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return nil
}

// warnNonFinite logs r's Warning, if any, for the evaluation called what.
func warnNonFinite(log *logrus.Logger, what string, r evaluate.Result) {
	if msg := r.Warning(); msg != "" {
		log.Warnf("%s: %s", what, msg)
	}
}
