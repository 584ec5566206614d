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
	"github.com/vitgo/vit/dist"
	"github.com/vitgo/vit/evaluate"
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

// Run trains a ViT as cfg says: nanoGPT's loop with timm's recipe. Its
// numbered steps are the loop; what hangs off it (prepare, afterStep,
// endEpoch) is one call away.
//
// A non-finite loss, gradient or weight stops the run with a
// *NonFiniteError (errors.As), the last good checkpoint kept; a cancelled
// ctx (SIGINT, SIGTERM) writes a checkpoint and returns ErrInterrupted.
func Run(ctx context.Context, cfg Config, opts Options) (*Result, error) {
	cfg = cfg.WithDefaults()
	// 1. prepare: data, model (fine-tuned from a file, or fresh), the step
	// and the evaluator, resumed or started afresh in out_dir.
	r, err := prepare(cfg, opts)
	if err != nil {
		return nil, err
	}
	defer r.close()
	c := &r.st.Counters // where the run is: all the loop advances, all a checkpoint keeps
	for c.Epoch < cfg.Train.Epochs {
		batches := r.epochBatches() // from the step the epoch is at (a resumed run mid-epoch)
		var err error
		for !r.maxed() {
			// 2. the next batch
			b, ok, berr := batches.Next()
			if err = berr; err != nil || !ok {
				break
			}
			// 3. forward and backward; reduce, clip, the optimizer at the lr, EMA
			lr := r.step.LR(c.Step) // warmup, then the schedule (optim.schedule)
			if _, err = r.step.Backward(b.X, b.Targets, c.Step); err != nil {
				err = r.stepFailed(err)
				break
			}
			s, serr := r.step.UpdateAt(c.Step, lr)
			if serr != nil {
				err = r.stepFailed(serr)
				break
			}
			c.Step, c.EpochStep, c.LossSum, c.NormSum = c.Step+1, c.EpochStep+1, c.LossSum+s.Loss, c.NormSum+s.GradNorm
			// 4. log; checkpoint every checkpoint.every_steps, and on a cancelled ctx
			if err = r.afterStep(ctx, b, s); err != nil {
				break
			}
		}
		batches.Close()
		if err != nil {
			return nil, err
		}
		// 5. the end of the epoch (or of the run, at max_steps): evaluate,
		// metrics.csv, checkpoints, curves.png
		last, err := r.endEpoch(ctx)
		if err != nil {
			return nil, err
		}
		if last {
			break
		}
	}
	return &Result{Steps: c.Step, Epochs: c.Epoch, Last: r.res.Last, LastEMA: r.res.LastEMA, BestTop1: c.BestTop1, OutDir: r.out}, nil
}

// run is one training run's live parts: what prepare builds and the loop
// and the end of each epoch use. Its counters are st.Counters.
type run struct {
	cfg        Config
	opts       Options
	log        *logrus.Logger
	comm       dist.Comm
	out        string
	data       runData
	model      *layers.VisionTransformer
	step       *Step
	eval       *evaluate.Evaluator
	meta       checkpoint.ModelMeta // of the model files, without the counters
	teacherSHA string               // distill.teacher's SHA-256 (hex); "" without distillation
	st         State                // the counters, and what a checkpoint saves
	rec        records
	res        Result // the last validation
	closers    []func()
}

// runData is a run's data: the two splits, the training loader and the
// schedule's length.
type runData struct {
	train, val      data.Dataset
	mean, std       []float64 // the training set's normalization
	loader          *data.Loader
	spe, totalSteps int // steps per epoch, and over all epochs
}

// records is what a run reports besides the model: metrics.csv, steps.csv
// and the throughput they show.
type records struct {
	metrics    *report.MetricsLog
	steps      *report.StepsLog
	start      time.Time // of this process's part of the run
	epoch, row meter     // this process's part of the epoch; the steps.csv row in progress
}

// meter counts images against the clock.
type meter struct {
	start time.Time
	imgs  int
}

func (m *meter) reset()          { m.start, m.imgs = time.Now(), 0 }
func (m *meter) perSec() float64 { return float64(m.imgs) / time.Since(m.start).Seconds() }

// root reports whether this is rank 0, the rank that writes.
func (r *run) root() bool { return r.comm.Rank() == 0 }

// epochBatches starts the current epoch's throughput meters and returns
// its batches from the step the epoch is at.
func (r *run) epochBatches() *data.Iter {
	r.rec.epoch.reset()
	r.rec.row = r.rec.epoch
	return r.data.loader.Epoch(r.st.Epoch, r.st.EpochStep)
}

// stepFailed adds to a non-finite step's error (or a teacher's) which
// file is the last good checkpoint, or that there is none.
func (r *run) stepFailed(err error) error {
	nf, tl := (*NonFiniteError)(nil), (*TeacherLogitsError)(nil)
	if !errors.As(err, &nf) && !errors.As(err, &tl) {
		return err
	}
	if !r.root() {
		return fmt.Errorf("%w; rank 0 keeps the last good checkpoint, if any", err)
	}
	path := filepath.Join(r.out, LastState)
	if _, serr := os.Stat(path); serr != nil {
		return fmt.Errorf("%w; no checkpoint was written before it: there is no good checkpoint in %s to resume from", err, r.out)
	}
	return fmt.Errorf("%w; the last good checkpoint is kept: %s (resume with -resume)", err, path)
}

// afterStep does what follows a step: count its images, show the progress
// bar, log every train.log_every steps, checkpoint every
// checkpoint.every_steps inside an epoch, and, when ctx is cancelled on
// any rank, checkpoint and return ErrInterrupted.
func (r *run) afterStep(ctx context.Context, b *data.Batch, s StepStats) error {
	cfg, c := r.cfg, &r.st.Counters
	r.rec.epoch.imgs += b.N * r.comm.Size()
	r.rec.row.imgs += b.N * r.comm.Size()
	if r.opts.onStep != nil {
		r.opts.onStep(r, b, s)
	}
	b.Release()
	if r.opts.Progress != nil {
		r.opts.Progress.Update(report.Progress{Epoch: c.Epoch + 1, Epochs: cfg.Train.Epochs, EpochStep: c.EpochStep, StepsPerEpoch: r.data.spe,
			Step: c.Step, Steps: r.runSteps(), Loss: s.Loss, LR: s.LR, ImgPerS: r.rec.epoch.perSec()})
	}
	if c.Step%cfg.Train.LogEvery == 0 {
		if err := r.logStep(s); err != nil {
			return err
		}
	}
	if every := cfg.Checkpoint.EverySteps; every > 0 && c.Step%every == 0 && c.EpochStep < r.data.spe {
		if err := r.save(); err != nil {
			return err
		}
	}
	stop, err := stopAll(r.comm, ctx.Err() != nil)
	if err != nil || !stop {
		return err
	}
	if err := r.save(); err != nil {
		return err
	}
	return fmt.Errorf("%w at step %d: checkpoint written to %s", ErrInterrupted, c.Step, r.out)
}

// logStep writes a steps.csv row for the step just taken, and a debug log
// line.
func (r *run) logStep(s StepStats) error {
	c := &r.st.Counters
	ips := r.rec.row.perSec()
	r.rec.row.reset()
	r.log.WithFields(logrus.Fields{"epoch": c.Epoch + 1, "step": c.Step, "loss": fmt.Sprintf("%.4f", s.Loss),
		"lr": fmt.Sprintf("%.3g", s.LR), "grad_norm": fmt.Sprintf("%.3f", s.GradNorm), "img_per_s": fmt.Sprintf("%.0f", ips)}).Debug("train")
	if !r.root() {
		return nil
	}
	return r.rec.steps.Append(report.StepRow{Step: c.Step, Epoch: c.Epoch + 1, LR: s.LR, Loss: s.Loss, GradNorm: s.GradNorm, ImgPerS: ips})
}

// runSteps is the number of steps the whole run takes.
func (r *run) runSteps() int {
	if m := r.cfg.Train.MaxSteps; m > 0 && m < r.data.totalSteps {
		return m
	}
	return r.data.totalSteps
}

// maxed reports whether train.max_steps steps are done.
func (r *run) maxed() bool { return r.cfg.Train.MaxSteps > 0 && r.st.Step >= r.cfg.Train.MaxSteps }

// warnNonFinite logs r's Warning, if any, for the evaluation called what.
func warnNonFinite(log *logrus.Logger, what string, r evaluate.Result) {
	if msg := r.Warning(); msg != "" {
		log.Warnf("%s: %s", what, msg)
	}
}
