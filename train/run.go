package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/sirupsen/logrus"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/optim"
)

// ErrInterrupted is returned by Run when its context is cancelled (SIGINT,
// SIGTERM): the current step was finished and a checkpoint written.
var ErrInterrupted = errors.New("training interrupted")

// Options are the run's non-config knobs.
type Options struct {
	Resume   bool            // continue from out_dir's last checkpoint
	Log      *logrus.Logger  // nil = logrus.StandardLogger()
	Progress *ProgressWriter // nil = no progress bar
}

// Result summarises a finished run.
type Result struct {
	Steps    int
	Epochs   int
	Last     EvalResult // validation of the final weights
	LastEMA  *EvalResult
	BestTop1 float64
	OutDir   string
}

// The files a run leaves in its output directory.
const (
	ConfigFile    = "config.yaml"
	MetricsFile   = "metrics.csv"
	LastModel     = "last.safetensors"
	LastState     = "last.train.safetensors"
	LastEMAModel  = "last_ema.safetensors"
	BestModel     = "best.safetensors"
	CurvesFile    = "curves.png"
	epochPattern  = "epoch_%d.safetensors"
	nonFiniteHint = "non-finite"
)

// Run trains a ViT as cfg says: nanoGPT's loop with timm's recipe.
func Run(ctx context.Context, cfg Config, opts Options) (*Result, error) {
	log := opts.Log
	if log == nil {
		log = logrus.StandardLogger()
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Train.Threads > 0 {
		runtime.GOMAXPROCS(cfg.Train.Threads)
	}
	out := cfg.Train.OutDir
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("out_dir: %w", err)
	}

	// 1. Data: the training and validation sets and their loaders.
	trainSet, err := data.Open(cfg.Data, data.Train, cfg.Model.InChans, data.WithLogger(log))
	if err != nil {
		return nil, err
	}
	valSet, err := data.Open(cfg.Data, data.Val, cfg.Model.InChans, data.WithLogger(log))
	if err != nil {
		return nil, err
	}
	if n := len(trainSet.Classes()); n > cfg.Model.NumClasses {
		return nil, fmt.Errorf("model.num_classes: %d, but %s has %d classes", cfg.Model.NumClasses, trainSet.Name(), n)
	}
	mean, std := trainSet.Norm()
	debug.FreeOSMemory() // return the decompression buffers of loading before training starts
	trainLoader, err := data.NewLoader(trainSet, loaderConfig(cfg, true, mean, std))
	if err != nil {
		return nil, err
	}
	spe := trainLoader.StepsPerEpoch()
	if spe == 0 {
		return nil, fmt.Errorf("train.batch_size %d is larger than the %d training images", cfg.Train.BatchSize, trainSet.Len())
	}
	totalSteps := cfg.Train.Epochs * spe

	// 2. Model: fresh, or initialised from a checkpoint (fine-tuning).
	model, err := layers.New(cfg.Model, tensor.Float32, cfg.Train.Seed)
	if err != nil {
		return nil, err
	}
	if cfg.Finetune.InitFrom != "" && !opts.Resume {
		notes, err := InitFrom(model, cfg.Finetune)
		if err != nil {
			return nil, err
		}
		for _, n := range notes {
			log.Infof("init_from: %s", n)
		}
	}

	// 3. Graphs: one for training (loss and gradients), one for evaluation,
	// their activations planned into one arena (they never run at once).
	arena := graph.NewArena()
	step, err := BuildTrainGraph(model, cfg.Train.BatchSize, cfg.Train.Seed, arena)
	if err != nil {
		return nil, err
	}
	defer step.Close()
	tg, loss, grads, vm := step.Graph, step.Loss, step.Grads, step.VM
	eval, err := NewEvaluatorIn(model, evalBatch(cfg), arena)
	if err != nil {
		return nil, err
	}
	defer eval.Close()
	log.Debugf("activations: %d outputs planned into %.1f MiB (%.1f MiB unplanned; training graph alone)",
		step.Plan.Planned, float64(arena.Bytes())/(1<<20), float64(step.Plan.Bytes)/(1<<20))

	// 4. Optimizer, schedule, EMA.
	params := make([]optim.Param, len(model.Params))
	for i, p := range model.Params {
		params[i] = optim.Param{Name: p.Name, Shape: p.Shape, Value: p.Value.Data().([]float32), NoDecay: p.NoWeightDecay, LayerID: p.LayerID}
	}
	opt, err := optim.NewAdamW(cfg.Optim)
	if err != nil {
		return nil, err
	}
	sched := cfg.Optim.Schedule()
	var ema *optim.EMA
	if cfg.Optim.EMA {
		if ema, err = optim.NewEMA(cfg.Optim.EMADecay, cfg.Optim.EMAWarmup, params); err != nil {
			return nil, err
		}
	}
	meta := ModelMeta{Dataset: trainSet.Name(), Mean: mean, Std: std, Classes: trainSet.Classes(), Weights: "raw"}
	cfgYAML, err := cfg.YAML()
	if err != nil {
		return nil, err
	}

	// 5. Resume, or start the output directory afresh.
	st := State{Seed: cfg.Train.Seed, Config: string(cfgYAML), BestTop1: -1}
	metrics := &MetricsLog{Path: filepath.Join(out, MetricsFile)}
	if opts.Resume {
		if st, err = resume(out, model, opt, ema); err != nil {
			return nil, err
		}
		log.Infof("resumed from %s at step %d (epoch %d, step %d of it)", filepath.Join(out, LastModel), st.Step, st.Epoch, st.EpochStep)
		if err := metrics.Truncate(st.Step); err != nil {
			return nil, err
		}
	} else if err := metrics.Create(); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(out, ConfigFile), cfgYAML, 0o644); err != nil {
		return nil, fmt.Errorf("write config: %w", err)
	}
	weights := make(map[string][]float32, len(params)) // the live parameter slices, written by SaveState
	for _, p := range params {
		weights[p.Name] = p.Value
	}
	save := func() error {
		meta.Epoch, meta.Step = st.Epoch, st.Step
		if err := SaveModel(filepath.Join(out, LastModel), model, meta, nil); err != nil {
			return err
		}
		st.OptStep, st.M, st.V = opt.State()
		st.Weights = weights
		if ema != nil {
			st.EMA = ema.Weights()
			em := meta
			em.Weights = "ema"
			if err := SaveModel(filepath.Join(out, LastEMAModel), model, em, st.EMA); err != nil {
				return err
			}
		}
		return SaveState(filepath.Join(out, LastState), st)
	}

	// 6. The loop: for each step, batch → forward/backward → clip → update → log.
	log.Infof("training %s: %d parameters, %d steps/epoch × %d epochs, batch %d, %d threads",
		trainSet.Name(), model.NumParams(), spe, cfg.Train.Epochs, cfg.Train.BatchSize, runtime.GOMAXPROCS(0))
	start := time.Now()
	res := &Result{OutDir: out}
	in := tg.Input.Value().Data().([]float32)
	tgt := step.Targets.Value().Data().([]float32)
	for st.Epoch < cfg.Train.Epochs {
		epochStart, epochImgs := time.Now(), 0
		var lossSum, normSum float64
		var lossN int
		it := trainLoader.Epoch(st.Epoch, st.EpochStep)
		for {
			if cfg.Train.MaxSteps > 0 && st.Step >= cfg.Train.MaxSteps {
				break
			}
			b, ok, err := it.Next()
			if err != nil {
				it.Close()
				return nil, err
			}
			if !ok {
				break
			}
			copy(in, b.X)
			copy(tgt, b.Targets)
			tg.Stoch.Step = uint64(st.Step)
			if err := vm.RunAll(); err != nil {
				it.Close()
				return nil, fmt.Errorf("step %d: %w", st.Step, err)
			}
			lv, _ := loss.Value().Data().(float32)
			for i, n := range grads {
				params[i].Grad = n.Value().Data().([]float32)
			}
			norm := optim.ClipGradNorm(params, cfg.Optim.ClipGrad)
			if math.IsNaN(float64(lv)) || math.IsInf(float64(lv), 0) {
				it.Close()
				return nil, fmt.Errorf("step %d: loss is %v (%s); the last good checkpoint is kept in %s", st.Step, lv, nonFiniteHint, out)
			}
			if name, ok := optim.GradsFinite(params); !ok {
				it.Close()
				return nil, fmt.Errorf("step %d: gradient of %s is %s; the last good checkpoint is kept in %s", st.Step, name, nonFiniteHint, out)
			}
			lr := sched.LR(st.Step, spe, totalSteps)
			if err := opt.Step(params, lr); err != nil {
				it.Close()
				return nil, fmt.Errorf("step %d: %w", st.Step, err)
			}
			if ema != nil {
				if err := ema.Update(params, st.Step+1); err != nil {
					it.Close()
					return nil, err
				}
			}
			vm.Reset()
			st.Step++
			st.EpochStep++
			epochImgs += b.N
			lossSum += float64(lv)
			normSum += norm
			lossN++
			ips := float64(epochImgs) / time.Since(epochStart).Seconds()
			if opts.Progress != nil {
				opts.Progress.Update(st.Epoch, st.EpochStep, spe, float64(lv), lr, ips)
			}
			if st.Step%cfg.Train.LogEvery == 0 {
				log.WithFields(logrus.Fields{"epoch": st.Epoch, "step": st.Step, "loss": fmt.Sprintf("%.4f", lv),
					"lr": fmt.Sprintf("%.3g", lr), "grad_norm": fmt.Sprintf("%.3f", norm), "img_per_s": fmt.Sprintf("%.0f", ips)}).Debug("train")
			}
			b.Release()
			if every := cfg.Checkpoint.EverySteps; every > 0 && st.Step%every == 0 && st.EpochStep < spe {
				if err := save(); err != nil {
					it.Close()
					return nil, err
				}
			}
			if ctx.Err() != nil {
				it.Close()
				if err := save(); err != nil {
					return nil, err
				}
				return nil, fmt.Errorf("%w at step %d: checkpoint written to %s", ErrInterrupted, st.Step, out)
			}
		}
		it.Close()
		epochDone := st.EpochStep >= spe
		stopped := cfg.Train.MaxSteps > 0 && st.Step >= cfg.Train.MaxSteps
		if epochDone {
			st.Epoch++
			st.EpochStep = 0
		}
		last := stopped || st.Epoch >= cfg.Train.Epochs
		if opts.Progress != nil {
			opts.Progress.Done()
		}

		// End of epoch (or of the run): evaluate, record, checkpoint.
		row := MetricsRow{Epoch: st.Epoch, Step: st.Step, LR: sched.LR(max(st.Step-1, 0), spe, totalSteps),
			ImgPerS: float64(epochImgs) / time.Since(epochStart).Seconds(), Elapsed: time.Since(start).Seconds()}
		if lossN > 0 {
			row.TrainLoss, row.GradNorm = lossSum/float64(lossN), normSum/float64(lossN)
		}
		if (epochDone && st.Epoch%cfg.Train.EvalEvery == 0) || last {
			valLoader, err := data.NewLoader(valSet, loaderConfig(cfg, false, mean, std))
			if err != nil {
				return nil, err
			}
			r, err := eval.Run(valLoader, nil)
			if err != nil {
				return nil, err
			}
			row.Val = &r
			res.Last = r
			if ema != nil {
				r2, err := eval.RunWith(valLoader, ema.Weights())
				if err != nil {
					return nil, err
				}
				row.ValEMA = &r2
				res.LastEMA = &r2
			}
			log.WithFields(logrus.Fields{"epoch": st.Epoch, "step": st.Step, "train_loss": fmt.Sprintf("%.4f", row.TrainLoss),
				"val_loss": fmt.Sprintf("%.4f", r.Loss), "val_top1": fmt.Sprintf("%.4f", r.Top1), "val_top5": fmt.Sprintf("%.4f", r.Top5),
				"img_per_s": fmt.Sprintf("%.0f", row.ImgPerS), "elapsed_s": fmt.Sprintf("%.0f", row.Elapsed)}).Info("epoch")
			if cfg.Checkpoint.SaveBest && r.Top1 > st.BestTop1 {
				st.BestTop1 = r.Top1
				meta.Epoch, meta.Step = st.Epoch, st.Step
				if err := SaveModel(filepath.Join(out, BestModel), model, meta, nil); err != nil {
					return nil, err
				}
			}
		}
		if err := metrics.Append(row); err != nil {
			return nil, err
		}
		if err := save(); err != nil {
			return nil, err
		}
		if epochDone && cfg.Checkpoint.KeepLast > 0 {
			if err := keepLast(out, model, meta, st.Epoch, cfg.Checkpoint.KeepLast); err != nil {
				return nil, err
			}
		}
		if err := PlotCurves(metrics.Path, filepath.Join(out, CurvesFile)); err != nil {
			log.Warnf("curves: %v", err)
		}
		if last {
			break
		}
	}
	res.Steps, res.Epochs, res.BestTop1 = st.Step, st.Epoch, st.BestTop1
	return res, nil
}

func evalBatch(cfg Config) int {
	if cfg.Train.EvalBatchSize > 0 {
		return cfg.Train.EvalBatchSize
	}
	return cfg.Train.BatchSize
}

// loaderConfig is the data loader's view of the run config.
func loaderConfig(cfg Config, train bool, mean, std []float64) data.LoaderConfig {
	lc := data.LoaderConfig{
		BatchSize: cfg.Train.BatchSize, ImgH: cfg.Model.ImgSize[0], ImgW: cfg.Model.ImgSize[1], Train: train,
		Seed: cfg.Train.Seed, Workers: cfg.Data.Workers, Prefetch: cfg.Data.Prefetch,
		Augment: cfg.Augment, Mixup: cfg.Mixup, NumClasses: cfg.Model.NumClasses, Mean: mean, Std: std,
	}
	if !train {
		lc.BatchSize = evalBatch(cfg)
	}
	return lc
}

// resume restores weights, optimizer, EMA and counters from dir.
func resume(dir string, m *layers.VisionTransformer, opt *optim.AdamW, ema *optim.EMA) (State, error) {
	statePath := filepath.Join(dir, LastState)
	st, err := LoadState(statePath)
	if err != nil {
		return State{}, fmt.Errorf("resume: %w", err)
	}
	if st.Weights != nil {
		// The state file carries the weights of its own step: last.safetensors
		// may be a step ahead if the run died between writing the two.
		if err := setWeights(m, st.Weights); err != nil {
			return State{}, fmt.Errorf("resume %s: %w", statePath, err)
		}
	} else { // a state file from before weights were kept in it
		f, meta, ok, err := ReadModel(filepath.Join(dir, LastModel))
		if err != nil {
			return State{}, fmt.Errorf("resume: %w", err)
		}
		if !ok {
			return State{}, fmt.Errorf("resume: %s has no model metadata", filepath.Join(dir, LastModel))
		}
		if _, err := LoadWeights(m, f, LoadOptions{NoResample: true}); err != nil {
			return State{}, fmt.Errorf("resume %s: %w", filepath.Join(dir, LastModel), err)
		}
		if st.Step != meta.Step {
			return State{}, fmt.Errorf("resume: %s is at step %d but %s at step %d", LastModel, meta.Step, LastState, st.Step)
		}
	}
	if err := opt.LoadState(st.OptStep, st.M, st.V); err != nil {
		return State{}, fmt.Errorf("resume %s: %w", filepath.Join(dir, LastState), err)
	}
	if ema != nil {
		if st.EMA == nil {
			return State{}, fmt.Errorf("resume: optim.ema is on but %s holds no EMA weights", filepath.Join(dir, LastState))
		}
		if err := ema.LoadWeights(st.EMA); err != nil {
			return State{}, fmt.Errorf("resume: %w", err)
		}
	}
	return st, nil
}

// setWeights copies w (name → values) into m's parameters: every parameter
// must be there with its size, and nothing else.
func setWeights(m *layers.VisionTransformer, w map[string][]float32) error {
	if len(w) != len(m.Params) {
		return fmt.Errorf("%d model tensors, the model has %d parameters", len(w), len(m.Params))
	}
	for _, p := range m.Params {
		v, ok := w[p.Name]
		if !ok {
			return fmt.Errorf("no weights for %s", p.Name)
		}
		dst := p.Value.Data().([]float32)
		if len(v) != len(dst) {
			return fmt.Errorf("%s: %d values, want %d", p.Name, len(v), len(dst))
		}
		copy(dst, v)
	}
	return nil
}

// keepLast writes epoch_N.safetensors and removes those older than n epochs.
func keepLast(dir string, m *layers.VisionTransformer, meta ModelMeta, epoch, n int) error {
	if err := SaveModel(filepath.Join(dir, fmt.Sprintf(epochPattern, epoch)), m, meta, nil); err != nil {
		return err
	}
	if old := epoch - n; old >= 1 {
		if err := os.Remove(filepath.Join(dir, fmt.Sprintf(epochPattern, old))); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return nil
}
