package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/checkpoint"
	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/evaluate"
	"github.com/vitgo/vit/internal/regfile"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/report"
	"github.com/vitgo/vit/train"
)

// Run is one finished training run, as its README needs it.
type Run struct {
	Dir        string
	Checkpoint string       // Dir/last.safetensors
	Config     train.Config `json:"-"`
	Top1, Loss float64      // validation of the final weights
	BestTop1   float64
	Steps      int
	Epochs     []Epoch       // metrics.csv, one per epoch
	Wall       time.Duration // 0 when read back
	ReadBack   bool          `json:",omitempty"` // finished by an earlier invocation
	// NonFinite says the run stopped on a non-finite loss, gradient or
	// weight (train.NonFiniteError) at NonFiniteStep.
	NonFinite     bool `json:",omitempty"`
	NonFiniteStep int  `json:",omitempty"`
}

// Epoch is one metrics.csv row.
type Epoch struct {
	Step      int
	TrainLoss float64
	Val       bool // validated this epoch
	ValTop1   float64
	ValLoss   float64
}

// Train trains the config file cfgPath (from the repository root) with the
// overrides, which name train.out_dir. If out_dir already holds a finished
// run of the same resolved config, that run is read back instead of
// trained again, so an interrupted experiment resumes where it stopped. A
// run stopped by a non-finite loss or gradient is returned with NonFinite
// set; any other failure is an error.
func (e *Env) Train(cfgPath string, overrides ...string) (Run, error) {
	cfg, err := train.LoadConfig(cfgPath, overrides)
	if err != nil {
		return Run{}, fmt.Errorf("%w (run from the repository root)", err)
	}
	dir := cfg.Train.OutDir
	r := Run{Dir: dir, Checkpoint: filepath.Join(dir, train.LastModel), Config: cfg}
	if finished(cfg) {
		r.ReadBack = true
		e.Log.Infof("%s: read back (an earlier invocation finished this config)", dir)
		return r, r.readMetrics()
	}
	e.Log.Infof("training into %s", dir)
	t0 := time.Now()
	res, err := train.Run(context.Background(), cfg, train.Options{Log: e.Log})
	r.Wall = time.Since(t0)
	var nf *train.NonFiniteError
	if errors.As(err, &nf) {
		r.NonFinite, r.NonFiniteStep = true, nf.Step
		return r, nil
	}
	if err != nil {
		return r, err
	}
	r.Top1, r.Loss, r.BestTop1, r.Steps = res.Last.Top1, res.Last.Loss, res.BestTop1, res.Steps
	return r, r.readMetrics()
}

// finished says whether cfg's out_dir holds a run of exactly cfg that
// reached its last epoch (or max_steps).
func finished(cfg train.Config) bool {
	want, err := cfg.YAML()
	if err != nil {
		return false
	}
	got, err := regfile.ReadFile(filepath.Join(cfg.Train.OutDir, train.ConfigFile))
	if err != nil || !bytes.Equal(got, want) {
		return false
	}
	r := Run{Dir: cfg.Train.OutDir}
	if r.readMetrics() != nil || len(r.Epochs) == 0 {
		return false
	}
	last := r.Epochs[len(r.Epochs)-1]
	end := len(r.Epochs) == cfg.Train.Epochs || (cfg.Train.MaxSteps > 0 && last.Step >= cfg.Train.MaxSteps)
	return end && last.Val
}

// readMetrics fills Epochs from the run's metrics.csv, and for a run read
// back, its final numbers.
func (r *Run) readMetrics() error {
	path := filepath.Join(r.Dir, train.MetricsFile)
	header, rows, err := report.ReadMetrics(path)
	if err != nil {
		return err
	}
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	num := func(row []string, name string) (float64, bool) {
		i, ok := col[name]
		if !ok || i >= len(row) {
			return 0, false
		}
		v, err := strconv.ParseFloat(row[i], 64)
		return v, err == nil
	}
	r.Epochs = r.Epochs[:0]
	for i, row := range rows {
		step, ok := num(row, "step")
		if !ok {
			return fmt.Errorf("%s: row %d: no step", path, i+1)
		}
		ep := Epoch{Step: int(step)}
		ep.TrainLoss, _ = num(row, "train_loss")
		ep.ValTop1, ep.Val = num(row, "val_top1")
		ep.ValLoss, _ = num(row, "val_loss")
		r.Epochs = append(r.Epochs, ep)
	}
	if r.ReadBack && len(r.Epochs) > 0 {
		last := r.Epochs[len(r.Epochs)-1]
		r.Top1, r.Loss, r.Steps = last.ValTop1, last.ValLoss, last.Step
		for _, ep := range r.Epochs {
			if ep.Val && ep.ValTop1 > r.BestTop1 {
				r.BestTop1 = ep.ValTop1
			}
		}
	}
	return nil
}

// Source is where an experiment's model came from: trained here on the
// budget, or the checkpoint given with -checkpoint. Experiments embed it in
// their results.
type Source struct {
	Checkpoint string
	Trained    string       // the config file and overrides it was trained with; "" when loaded
	Config     string       // the resolved config.yaml beside a loaded checkpoint, if any
	Top1       float64      // the training run's final validation; 0 when loaded
	Cfg        train.Config `json:"-"` // the run's config, or the defaults with the checkpoint's data set
}

// TrainOrLoad trains cfgPath on the budget (extra overrides after it) into
// e.Runs, or, with -checkpoint, reads that checkpoint's metadata instead.
func (e *Env) TrainOrLoad(cfgPath string, extra ...string) (Source, error) {
	if e.Checkpoint == "" {
		o := e.Budget.Overrides(e.Runs, extra...)
		r, err := e.Train(cfgPath, o...)
		if err != nil {
			return Source{}, err
		}
		return Source{Checkpoint: r.Checkpoint, Trained: cfgPath + " with " + strings.Join(o, " "), Top1: r.Top1, Cfg: r.Config}, nil
	}
	s := Source{Checkpoint: e.Checkpoint, Cfg: train.DefaultConfig()}
	_, meta, ours, err := checkpoint.ReadModel(e.Checkpoint)
	if err != nil {
		return s, err
	}
	if ours && meta.Dataset != "" {
		s.Cfg.Data.Name = data.DatasetName(meta.Dataset)
	}
	if cfg := filepath.Join(filepath.Dir(e.Checkpoint), train.ConfigFile); fileExists(cfg) {
		s.Config = cfg
	}
	return s, nil
}

func fileExists(path string) bool { _, err := os.Stat(path); return err == nil }

// Model loads a checkpoint in dtype dt (float64 widens the stored float32),
// at its own img_size.
func Model(ckpt string, dt tensor.Dtype) (*layers.VisionTransformer, checkpoint.ModelMeta, error) {
	m, meta, _, err := checkpoint.LoadModel(ckpt, dt, nil, "")
	return m, meta, err
}

// Evaluate scores m on cfg's validation split (cfg.Data, batch
// train.eval_batch_size), normalised as meta says, in eval mode.
func Evaluate(m *layers.VisionTransformer, meta checkpoint.ModelMeta, cfg train.Config) (evaluate.Result, error) {
	cfg.Model = m.Config
	l, err := train.NewEvalLoader(cfg, meta.Mean, meta.Std)
	if err != nil {
		return evaluate.Result{}, err
	}
	ev, err := evaluate.New(m, l.Config().BatchSize)
	if err != nil {
		return evaluate.Result{}, err
	}
	defer ev.Close()
	return ev.Run(context.Background(), l, nil)
}

// Images returns the first n images of cfg's validation split as the
// evaluation loader gives them (resized to cfg.Model's img_size, normalised
// with mean and std, nil: the data set's own), and their labels.
func Images(cfg train.Config, n int, mean, std []float64) ([]float32, []int, error) {
	cfg.Data.LimitVal, cfg.Train.EvalBatchSize = n, n
	l, err := train.NewEvalLoader(cfg, mean, std)
	if err != nil {
		return nil, nil, err
	}
	it := l.Epoch(0, 0)
	defer it.Close()
	b, ok, err := it.Next()
	if err != nil {
		return nil, nil, err
	}
	if !ok || b.N != n {
		return nil, nil, fmt.Errorf("wanted %d validation images", n)
	}
	return append([]float32(nil), b.X...), append([]int(nil), b.Labels...), nil
}

// Floats returns a copy of v converted element by element to To: the
// experiments read float32 models and measure in float64, and back.
func Floats[To, From float32 | float64](v []From) []To {
	out := make([]To, len(v))
	for i, x := range v {
		out[i] = To(x)
	}
	return out
}

// Float64s is a float64 copy of a tensor's backing slice ([]float32 or
// []float64); nil for any other type.
func Float64s(data any) []float64 {
	switch d := data.(type) {
	case []float32:
		return Floats[float64](d)
	case []float64:
		return append([]float64(nil), d...)
	}
	return nil
}
