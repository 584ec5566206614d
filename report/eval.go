package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/vitgo/vit/evaluate"
	"github.com/vitgo/vit/internal/atomicfile"
)

// EvalFiles are the report files of one evaluation, as cmd/eval writes them
// ("" = not written): a predictions CSV (index,label,pred,logit_0…), the
// results as JSON, and the confusion matrix as a PNG.
type EvalFiles struct {
	Predictions, Results, Confusion string
}

// EvalReports writes an evaluation's report files; it is the
// evaluate.Reports that cmd/eval hands to evaluate.CheckpointReported. Each
// is written atomically, so an evaluation that fails or is interrupted
// (Abort) leaves no partial file and no temporary file behind.
type EvalReports struct {
	files EvalFiles
	pred  *atomicfile.File // nil without a predictions file
	w     *bufio.Writer
	cols  int // logits per row, known from the first batch
}

// NewEvalReports removes the temporary files that a process killed while
// writing one of files left, and opens the predictions file.
func NewEvalReports(files EvalFiles) (*EvalReports, error) {
	for _, p := range []string{files.Predictions, files.Results, files.Confusion} {
		if p != "" {
			atomicfile.RemoveStaleFor(p)
		}
	}
	r := &EvalReports{files: files}
	if files.Predictions != "" {
		f, err := atomicfile.Create(files.Predictions)
		if err != nil {
			return nil, fmt.Errorf("predictions: %w", err)
		}
		r.pred, r.w = f, bufio.NewWriter(f)
	}
	return r, nil
}

// OnBatch is the evaluation's batch hook (evaluate.Options.OnBatch): nil
// without a predictions file.
func (r *EvalReports) OnBatch() func(idx, labels []int, logits []float32) error {
	if r.pred == nil {
		return nil
	}
	return r.writePredictions
}

// writePredictions adds one row per image; pred is -1 for a row of
// non-finite logits.
func (r *EvalReports) writePredictions(idx, labels []int, logits []float32) error {
	if len(labels) == 0 {
		return nil
	}
	if r.cols == 0 {
		r.cols = len(logits) / len(labels)
		io.WriteString(r.w, "index,label,pred")
		for c := 0; c < r.cols; c++ {
			fmt.Fprintf(r.w, ",logit_%d", c)
		}
		io.WriteString(r.w, "\n")
	}
	c := r.cols
	for i := range labels {
		row := logits[i*c : (i+1)*c]
		pred, _ := evaluate.RankOf(row, labels[i])
		r.w.WriteString(strconv.Itoa(idx[i]) + "," + strconv.Itoa(labels[i]) + "," + strconv.Itoa(pred))
		for _, v := range row {
			r.w.WriteString("," + strconv.FormatFloat(float64(v), 'g', -1, 32))
		}
		r.w.WriteString("\n")
	}
	return nil
}

// Abort drops the predictions file; nothing is left behind. It is a no-op
// after Commit.
func (r *EvalReports) Abort() {
	if r.pred != nil {
		r.pred.Abort()
	}
}

// Commit writes the reports of the finished evaluation res: the
// predictions file, the results JSON and the confusion PNG (class names
// from classes).
func (r *EvalReports) Commit(res evaluate.Result, classes []string) error {
	if r.pred != nil {
		if err := r.w.Flush(); err != nil {
			r.pred.Abort()
			return fmt.Errorf("predictions: %w", err)
		}
		if err := r.pred.Commit(); err != nil {
			return fmt.Errorf("predictions: %w", err)
		}
	}
	if r.files.Results != "" {
		b, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		if err := atomicfile.WriteBytes(r.files.Results, b); err != nil {
			return err
		}
	}
	if r.files.Confusion != "" {
		if err := PlotConfusion(res.Confusion, classes, r.files.Confusion); err != nil {
			return err
		}
	}
	return nil
}

// FormatEval renders an evaluation result as text: totals, per-class
// accuracy and the confusion matrix.
func FormatEval(w io.Writer, r evaluate.Result, classes []string) {
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
