package train

import (
	"fmt"
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
	"github.com/vitgo/vit/optim"
	"github.com/vitgo/vit/report"
)

// prepare builds everything a run needs and resumes it or starts out_dir
// afresh. On error it releases what it built.
func prepare(cfg Config, opts Options) (_ *run, err error) {
	r := &run{cfg: cfg, opts: opts, log: opts.Log, out: cfg.Train.OutDir, comm: opts.Comm, rec: records{start: time.Now()}}
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
	if err := agreeConfig(r.comm, cfg, opts.Resume); err != nil { // every rank runs rank 0's config
		return nil, err
	}
	if err := memory.CheckProcess(EstimateMemory(cfg)); err != nil {
		return nil, err
	}
	if cfg.Train.Threads > 0 {
		runtime.GOMAXPROCS(cfg.Train.Threads)
	}
	var opened error
	if r.root() { // the output directory is rank 0's alone
		release, err := openOutDir(cfg, opts, r.log) // lock, clean and check it (outdir.go)
		if err == nil {
			r.closers = append(r.closers, release) // closed last
		}
		opened = err
	}
	// Every rank learns at once whether rank 0 goes on: a resumed run that is
	// complete ends every rank here with ErrRunComplete.
	if err := shareOutcome(r.comm, opened); err != nil {
		return nil, err
	}
	if err := r.agreeData(r.openData()); err != nil { // every rank trains on rank 0's data
		return nil, err
	}
	if err := r.agreeTeacher(r.buildModel()); err != nil { // and distils from rank 0's teacher
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
	r.log.Infof("training %s: %d parameters, %d steps/epoch × %d epochs, batch %d, %d rank(s) × %d threads, precision %s, recompute %s",
		r.data.train.Name(), r.model.NumParams(), r.data.spe, cfg.Train.Epochs, cfg.Train.BatchSize, r.comm.Size(), runtime.GOMAXPROCS(0), cfg.Train.Precision, cfg.Train.Recompute)
	for _, w := range cfg.Warnings() {
		r.log.Warn(w)
	}
	return r, nil
}

// Warnings are the settings of a valid config that a run will likely
// regret, one line each, logged at start: Lamb with a head that starts at
// zero (model.zero_init_head, from scratch or with finetune.reset_head).
// Lamb scales each tensor's step by the tensor's norm (its trust ratio), so
// a head at zero moves once, by the first steps' tiny warmup rate, and then
// barely at all: on MNIST such a run stays at chance.
func (c Config) Warnings() []string {
	var out []string
	if c.Optim.Opt == optim.OptLamb && c.Model.WithDefaults().ZeroInitHead.Value() && (c.Finetune.InitFrom == "" || c.Finetune.ResetHead) {
		out = append(out, "optim.opt lamb with model.zero_init_head true: Lamb scales a tensor's step by its norm, so a head that starts at zero stays near it (set model.zero_init_head: false)")
	}
	return out
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
	if r.data.train, err = data.Open(cfg.Data, data.Train, cfg.Model.InChans, data.WithLogger(r.log)); err != nil {
		return err
	}
	if r.data.val, err = data.Open(cfg.Data, data.Val, cfg.Model.InChans, data.WithLogger(r.log)); err != nil {
		return err
	}
	if n := len(r.data.train.Classes()); n > cfg.Model.NumClasses {
		return fmt.Errorf("model.num_classes: %d, but %s has %d classes", cfg.Model.NumClasses, r.data.train.Name(), n)
	}
	r.data.mean, r.data.std = r.data.train.Norm()
	debug.FreeOSMemory() // return the decompression buffers of loading before training starts
	if r.data.loader, err = data.NewLoader(r.data.train, r.loaderConfig(true)); err != nil {
		return err
	}
	if r.data.spe = r.data.loader.StepsPerEpoch(); r.data.spe == 0 {
		return fmt.Errorf("train.batch_size %d is larger than the %d training images", cfg.Train.BatchSize, r.data.train.Len())
	}
	r.data.totalSteps = cfg.Train.Epochs * r.data.spe
	if d, _ := data.Lookup(cfg.Data.Name); d.Decodes {
		lc := r.data.loader.Config()
		_, where := cfg.Data.SplitSource(data.Train)
		r.log.Infof("data: %d training images in %s, %d loader workers, %d batches prefetched, JPEG decoder %s",
			r.data.train.Len(), where, lc.Workers, lc.Prefetch, data.JPEGDecoder())
	}
	r.meta = checkpoint.ModelMeta{Dataset: r.data.train.Name(), Mean: r.data.mean, Std: r.data.std, Precision: cfg.Train.Precision,
		Classes: checkpoint.HeadClasses(r.data.train.Classes(), cfg.Model.NumClasses)}
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
	frozen, err := FrozenNames(cfg)
	if err != nil {
		return err
	}
	if len(frozen) > 0 {
		n := 0
		for _, p := range r.model.Params {
			if !frozen[p.Name] {
				n += p.Shape.TotalSize()
			}
		}
		r.log.Infof("finetune: %d of %d tensors frozen; %d of %d parameters trained", len(frozen), len(r.model.Params), n, r.model.NumParams())
	}
	var teacher *Teacher
	if cfg.Distill.Type.On() { // every rank labels its own rows with its own copy
		if teacher, err = LoadTeacher(cfg.Distill, cfg.Model); err != nil {
			return err
		}
		if err = teacher.Match(r.data.train.Classes(), r.data.mean, r.data.std); err != nil {
			return err
		}
		for _, n := range teacher.Notes {
			r.log.Infof("distill: %s", n)
		}
		tc := teacher.Model.Config
		r.log.Infof("distill: %s teacher %s (sha256 %s): img %v, patch %d, dim %d, depth %d, %d parameters",
			cfg.Distill.Type, teacher.Path, teacher.SHA256, tc.ImgSize, tc.PatchSize, tc.EmbedDim, tc.Depth, teacher.Model.NumParams())
		r.teacherSHA = teacher.SHA256
	}
	arena := graph.NewArena()
	if r.step, err = NewStep(r.model, StepConfig{Batch: cfg.Train.BatchSize, Seed: cfg.Train.Seed, Optim: cfg.Optim,
		StepsPerEpoch: r.data.spe, TotalSteps: r.data.totalSteps, Arena: arena, Comm: r.comm, GradAccum: cfg.Train.GradAccumSteps,
		Frozen: frozen, Distill: cfg.Distill, Teacher: teacher, Precision: cfg.Train.Precision, Recompute: cfg.Train.Recompute}); err != nil {
		if teacher != nil && teacher.vm != nil {
			teacher.Close()
		}
		return err
	}
	r.closers = append(r.closers, r.step.Close)
	if r.eval, err = evaluate.NewIn(r.model, cfg.EvalBatch(), arena, evaluate.WithPrecision(cfg.Train.Precision)); err != nil {
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
	r.rec.metrics = &report.MetricsLog{Path: filepath.Join(r.out, MetricsFile)}
	r.rec.steps = &report.StepsLog{Path: filepath.Join(r.out, report.StepsFile)}
	r.closers = append(r.closers, func() { r.rec.steps.Close() })
	if !r.opts.Resume {
		r.st = State{Counters: Counters{BestTop1: -1}, Seed: r.cfg.Train.Seed, Config: cfgYAML, Classes: r.meta.Classes,
			TeacherSHA256: r.teacherSHA}
		if err := r.rec.steps.Create(); err != nil {
			return err
		}
		return r.rec.metrics.Create()
	}
	statePath := filepath.Join(r.out, LastState)
	st, err := LoadState(statePath)
	if err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	if err := checkTeacher(statePath, st, r.cfg, r.teacherSHA, r.log); err != nil {
		return err
	}
	if st.Weights == nil {
		return fmt.Errorf("resume %s: holds no model weights (written by an older version)", statePath)
	}
	// The head's rows are the run's classes: a class added to (or removed
	// from) the folders since would relabel them.
	classes, from := st.Classes, statePath
	if classes == nil { // a state file from before classes were kept there
		from = filepath.Join(r.out, LastModel)
		if _, meta, _, err := checkpoint.ReadModel(from); err == nil {
			classes = meta.Classes
		}
	}
	if err := checkpoint.CheckClasses(from, classes, r.data.train.Classes()); err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	if err := r.step.Restore(st); err != nil {
		return fmt.Errorf("resume %s: %w", statePath, err)
	}
	r.st = st
	r.st.Classes = r.meta.Classes
	r.st.Config = cfgYAML             // differs from the stored one only in the keys openOutDir allowed
	r.st.TeacherSHA256 = r.teacherSHA // equal to the stored one: checkTeacher refuses another teacher
	r.log.Infof("resumed from %s (weights, optimizer, EMA) at step %d (epoch %d, step %d of it)", statePath, st.Step, st.Epoch+1, st.EpochStep)
	if err := r.rec.steps.Resume(st.Step); err != nil {
		return err
	}
	return r.rec.metrics.Truncate(st.Step)
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
	lc := loaderConfig(r.cfg, train, r.data.mean, r.data.std)
	lc.Rank, lc.Ranks = r.comm.Rank(), r.comm.Size()
	return lc
}
