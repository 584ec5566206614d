package train

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/vitgo/vit/checkpoint"
	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/evaluate"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/report"
)

// endEpoch closes an epoch, or the run when max_steps stopped it early:
// evaluate (every train.eval_every epochs and at the end), append the
// metrics row, save the checkpoints and draw the curves. last reports the
// end of the run.
func (r *run) endEpoch(ctx context.Context) (last bool, err error) {
	cfg, st := r.cfg, &r.st.Counters
	before := *st // the counters of an epoch trained but not yet recorded
	if r.opts.Progress != nil {
		r.opts.Progress.Done()
	}
	row := report.MetricsRow{Step: st.Step, LR: r.step.LR(max(st.Step-1, 0)),
		ImgPerS: r.rec.epoch.perSec(), Elapsed: time.Since(r.rec.start).Seconds()}
	if st.EpochStep > 0 {
		row.TrainLoss, row.GradNorm = st.LossSum/float64(st.EpochStep), st.NormSum/float64(st.EpochStep)
	}
	epochDone := st.EpochStep >= r.data.spe
	if epochDone {
		st.Epoch++
		st.EpochStep, st.LossSum, st.NormSum = 0, 0, 0
	}
	// The row's epoch is that of its last step, 1-based, as in steps.csv and
	// the logs: a max_steps stop inside epoch 2 is epoch 2, not 1.
	row.Epoch = before.Epoch + 1
	if before.EpochStep == 0 {
		row.Epoch = max(before.Epoch, 1)
	}
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
	if err := r.rec.metrics.Append(row); err != nil {
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
	if err := report.PlotCurves(r.rec.metrics.Path, r.rec.steps.Path, filepath.Join(r.out, CurvesFile)); err != nil {
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
	st := &r.st.Counters
	valLoader, err := data.NewLoader(r.data.val, r.loaderConfig(false))
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
	r.log.WithFields(logrus.Fields{"epoch": row.Epoch, "step": st.Step, "train_loss": fmt.Sprintf("%.4f", row.TrainLoss),
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

// evalInterrupted ends a run whose end-of-epoch evaluation was interrupted:
// it saves the counters as they were before the epoch's end was recorded
// (trained, not evaluated), so that resuming evaluates the epoch and writes
// its metrics row once, and returns the interrupted run's error.
func (r *run) evalInterrupted(err error, before Counters) error {
	st := &r.st.Counters
	st.Epoch, st.EpochStep, st.LossSum, st.NormSum = before.Epoch, before.EpochStep, before.LossSum, before.NormSum
	if serr := r.save(); serr != nil {
		return serr
	}
	return fmt.Errorf("%w at step %d (%w): checkpoint written to %s", ErrInterrupted, st.Step, err, r.out)
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
