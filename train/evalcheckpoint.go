package train

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/checkpoint/safetensors"
	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/internal/atomicfile"
	"github.com/vitgo/vit/layers"
)

// EvalOptions say what cmd/eval evaluates and where its reports go.
type EvalOptions struct {
	Checkpoint  string        // a model .safetensors of ours
	Config      *Config       // data section (and batch size); nil = the checkpoint's dataset with defaults
	ImgSize     *layers.Size2 // evaluate at another size, pos_embed resampled; nil = the checkpoint's
	Interp      string        // bicubic (default) | bilinear
	EMA         bool          // use the EMA weights from the sibling .train.safetensors
	Predictions string        // CSV path: index,label,pred,logit_0…
	Results     string        // JSON path
	Confusion   string        // PNG path
}

// EvaluateCheckpoint loads a checkpoint (model config, normalization and
// class names from its metadata) and evaluates it on a data set's
// validation split, writing the requested reports. Each report is written
// atomically, so an interrupted evaluation (ctx cancelled: the error wraps
// ErrInterrupted) leaves no partial file and no temporary file behind.
func EvaluateCheckpoint(ctx context.Context, o EvalOptions) (EvalResult, ModelMeta, []string, error) {
	for _, p := range []string{o.Predictions, o.Results, o.Confusion} {
		if p != "" {
			atomicfile.RemoveStaleFor(p) // left by a process killed while writing p
		}
	}
	m, meta, notes, err := LoadModel(o.Checkpoint, tensor.Float32, o.ImgSize, o.Interp)
	if err != nil {
		return EvalResult{}, meta, nil, err
	}
	if o.EMA {
		if err := loadEMA(m, o.Checkpoint); err != nil {
			return EvalResult{}, meta, nil, err
		}
		notes = append(notes, "EMA weights")
	}
	cfg := DefaultConfig()
	if o.Config != nil {
		cfg = *o.Config
	} else if meta.Dataset != "" {
		cfg.Data.Name = data.DatasetName(meta.Dataset)
	}
	cfg.Model = m.Config
	if err := checkMachineMemory(EstimateEvalMemory(cfg)); err != nil {
		return EvalResult{}, meta, nil, err
	}
	valSet, err := data.Open(cfg.Data, data.Val, m.Config.InChans)
	if err != nil {
		return EvalResult{}, meta, nil, err
	}
	mean, std := meta.Mean, meta.Std
	if len(mean) == 0 {
		mean, std = valSet.Norm()
	}
	loader, err := data.NewLoader(valSet, loaderConfig(cfg, false, mean, std))
	if err != nil {
		return EvalResult{}, meta, nil, err
	}
	ev, err := NewEvaluator(m, evalBatch(cfg))
	if err != nil {
		return EvalResult{}, meta, nil, err
	}
	defer ev.Close()
	var onBatch func(idx, labels []int, logits []float32) error
	var pw *predictionWriter
	if o.Predictions != "" {
		if pw, err = newPredictionWriter(o.Predictions, m.Config.NumClasses); err != nil {
			return EvalResult{}, meta, nil, err
		}
		defer pw.f.Abort() // a panic must not leave the temporary file; nothing after Commit
		onBatch = pw.write
	}
	r, err := ev.Run(ctx, loader, onBatch)
	if pw != nil {
		if cerr := pw.close(err != nil); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return EvalResult{}, meta, nil, err
	}
	if o.Results != "" {
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return r, meta, notes, err
		}
		if err := atomicfile.WriteBytes(o.Results, b); err != nil {
			return r, meta, notes, err
		}
	}
	if o.Confusion != "" {
		if err := PlotConfusion(r.Confusion, meta.Classes, o.Confusion); err != nil {
			return r, meta, notes, err
		}
	}
	return r, meta, notes, nil
}

// loadEMA swaps in the EMA weights saved beside a checkpoint.
func loadEMA(m *layers.VisionTransformer, ckpt string) error {
	path := strings.TrimSuffix(ckpt, ".safetensors") + ".train.safetensors"
	f, err := safetensors.ReadFile(path)
	if err != nil {
		return fmt.Errorf("-ema: %w", err)
	}
	for _, p := range m.Params {
		t, ok := f.Get("ema." + p.Name)
		if !ok {
			return fmt.Errorf("-ema: %s holds no EMA weights (ema.%s)", path, p.Name)
		}
		v, err := t.Float32()
		if err != nil {
			return fmt.Errorf("-ema: %s: %w", path, err)
		}
		if len(v) != p.Shape.TotalSize() {
			return fmt.Errorf("-ema: %s: ema.%s has %d values, the model %v", path, p.Name, len(v), []int(p.Shape))
		}
		copy(p.Value.Data().([]float32), v)
	}
	return nil
}

// predictionWriter streams the predictions CSV into an atomic file.
type predictionWriter struct {
	f       *atomicfile.File
	w       *bufio.Writer
	classes int
}

func newPredictionWriter(path string, classes int) (*predictionWriter, error) {
	f, err := atomicfile.Create(path)
	if err != nil {
		return nil, fmt.Errorf("predictions: %w", err)
	}
	w := bufio.NewWriter(f)
	io.WriteString(w, "index,label,pred")
	for c := 0; c < classes; c++ {
		fmt.Fprintf(w, ",logit_%d", c)
	}
	io.WriteString(w, "\n")
	return &predictionWriter{f: f, w: w, classes: classes}, nil
}

// write adds one row per image; pred is -1 for a row of non-finite logits.
func (p *predictionWriter) write(idx, labels []int, logits []float32) error {
	c := p.classes
	for i := range labels {
		row := logits[i*c : (i+1)*c]
		pred, _ := rankOf(row, labels[i])
		p.w.WriteString(strconv.Itoa(idx[i]) + "," + strconv.Itoa(labels[i]) + "," + strconv.Itoa(pred))
		for _, v := range row {
			p.w.WriteString("," + strconv.FormatFloat(float64(v), 'g', -1, 32))
		}
		p.w.WriteString("\n")
	}
	return nil
}

// close commits the file when the evaluation succeeded (failed false), and
// drops it otherwise.
func (p *predictionWriter) close(failed bool) error {
	if failed {
		p.f.Abort()
		return nil
	}
	if err := p.w.Flush(); err != nil {
		p.f.Abort()
		return fmt.Errorf("predictions: %w", err)
	}
	if err := p.f.Commit(); err != nil {
		return fmt.Errorf("predictions: %w", err)
	}
	return nil
}

// FormatReport renders an EvalResult as text: totals, per-class accuracy and
// the confusion matrix.
func FormatReport(w io.Writer, r EvalResult, classes []string) {
	fmt.Fprintf(w, "top1 %.4f  top5 %.4f  loss %.4f  images %d  %.0f img/s\n", r.Top1, r.Top5, r.Loss, r.Images, r.ImgPerS)
	if msg := r.Warning(); msg != "" {
		fmt.Fprintf(w, "warning: %s\n", msg)
	}
	fmt.Fprintf(w, "\nper-class accuracy:\n")
	name := func(i int) string {
		if i < len(classes) {
			return classes[i]
		}
		return strconv.Itoa(i)
	}
	for i, a := range r.PerClass {
		fmt.Fprintf(w, "  %-12s %.4f\n", name(i), a)
	}
	fmt.Fprintf(w, "\nconfusion (rows: label, columns: prediction):\n%12s", "")
	for j := range r.Confusion {
		fmt.Fprintf(w, " %6.6s", name(j))
	}
	fmt.Fprintln(w)
	for i, row := range r.Confusion {
		fmt.Fprintf(w, "  %-10.10s", name(i))
		for _, v := range row {
			fmt.Fprintf(w, " %6d", v)
		}
		fmt.Fprintln(w)
	}
}
