package train

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/train/safetensors"
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
// validation split, writing the requested reports.
func EvaluateCheckpoint(o EvalOptions) (EvalResult, ModelMeta, []string, error) {
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
		onBatch = pw.write
	}
	r, err := ev.Run(loader, onBatch)
	if pw != nil {
		if cerr := pw.close(); err == nil {
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
		if err := writeAtomic(o.Results, b); err != nil {
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

// predictionWriter streams the predictions CSV.
type predictionWriter struct {
	f       *os.File
	w       *bufio.Writer
	classes int
	tmp     string
	path    string
}

func newPredictionWriter(path string, classes int) (*predictionWriter, error) {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-pred-*")
	if err != nil {
		return nil, fmt.Errorf("predictions: %w", err)
	}
	w := bufio.NewWriter(f)
	io.WriteString(w, "index,label,pred")
	for c := 0; c < classes; c++ {
		fmt.Fprintf(w, ",logit_%d", c)
	}
	io.WriteString(w, "\n")
	return &predictionWriter{f: f, w: w, classes: classes, tmp: f.Name(), path: path}, nil
}

func (p *predictionWriter) write(idx, labels []int, logits []float32) error {
	c := p.classes
	for i := range labels {
		row := logits[i*c : (i+1)*c]
		pred := 0
		for j, v := range row {
			if v > row[pred] {
				pred = j
			}
		}
		p.w.WriteString(strconv.Itoa(idx[i]) + "," + strconv.Itoa(labels[i]) + "," + strconv.Itoa(pred))
		for _, v := range row {
			p.w.WriteString("," + strconv.FormatFloat(float64(v), 'g', -1, 32))
		}
		p.w.WriteString("\n")
	}
	return nil
}

func (p *predictionWriter) close() error {
	defer os.Remove(p.tmp)
	if err := p.w.Flush(); err != nil {
		p.f.Close()
		return fmt.Errorf("predictions %s: %w", p.path, err)
	}
	if err := p.f.Close(); err != nil {
		return fmt.Errorf("predictions %s: %w", p.path, err)
	}
	return os.Rename(p.tmp, p.path)
}

// writeAtomic writes b to path through a temp file and rename.
func writeAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return os.Rename(f.Name(), path)
}

// FormatReport renders an EvalResult as text: totals, per-class accuracy and
// the confusion matrix.
func FormatReport(w io.Writer, r EvalResult, classes []string) {
	fmt.Fprintf(w, "top1 %.4f  top5 %.4f  loss %.4f  images %d  %.0f img/s\n\nper-class accuracy:\n", r.Top1, r.Top5, r.Loss, r.Images, r.ImgPerS)
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
