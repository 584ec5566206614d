package report

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"

	"github.com/vitgo/vit/evaluate"
	"github.com/vitgo/vit/internal/atomicfile"
	"github.com/vitgo/vit/internal/regfile"
)

// MetricsRow is one line of metrics.csv, written after each epoch (and at a
// max_steps stop). Accuracies are fractions.
type MetricsRow struct {
	Epoch, Step         int
	LR                  float64
	TrainLoss, GradNorm float64 // means over the epoch's steps
	Val, ValEMA         *evaluate.Result
	ImgPerS, Elapsed    float64
}

// MetricsHeader is metrics.csv's first line.
var MetricsHeader = []string{"epoch", "step", "lr", "train_loss", "val_loss", "val_top1", "val_top5", "grad_norm", "img_per_s", "elapsed_s", "ema_val_loss", "ema_val_top1", "ema_val_top5", "val_non_finite"}

// MetricsLog appends rows to a CSV file.
type MetricsLog struct{ Path string }

// Create starts the file with its header, replacing any old one.
func (l *MetricsLog) Create() error {
	return l.write([][]string{MetricsHeader}, os.O_CREATE|os.O_TRUNC|os.O_WRONLY)
}

// Append adds one row.
func (l *MetricsLog) Append(r MetricsRow) error {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	rec := []string{strconv.Itoa(r.Epoch), strconv.Itoa(r.Step), f(r.LR), f(r.TrainLoss), "", "", "", f(r.GradNorm), f(r.ImgPerS), f(r.Elapsed), "", "", "", ""}
	if r.Val != nil {
		rec[4], rec[5], rec[6] = f(r.Val.Loss), f(r.Val.Top1), f(r.Val.Top5)
		rec[13] = strconv.Itoa(r.Val.NonFinite) // images whose logits held NaN or Inf
	}
	if r.ValEMA != nil {
		rec[10], rec[11], rec[12] = f(r.ValEMA.Loss), f(r.ValEMA.Top1), f(r.ValEMA.Top5)
	}
	return l.write([][]string{rec}, os.O_APPEND|os.O_CREATE|os.O_WRONLY)
}

// write rewrites the file atomically: with os.O_APPEND, the old rows
// followed by recs; otherwise recs alone.
func (l *MetricsLog) write(recs [][]string, flag int) error {
	if flag&os.O_APPEND != 0 {
		header, rows, err := ReadMetrics(l.Path)
		switch {
		case err == nil:
			recs = append(append([][]string{header}, rows...), recs...)
		case errors.Is(err, os.ErrNotExist):
			recs = append([][]string{MetricsHeader}, recs...)
		default:
			return err
		}
	}
	if err := atomicfile.Write(l.Path, func(w io.Writer) error { return csv.NewWriter(w).WriteAll(recs) }); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	return nil
}

// ReadMetrics parses a metrics.csv into its header and rows.
func ReadMetrics(path string) ([]string, [][]string, error) {
	f, _, err := regfile.Open(path) // a FIFO is refused, not waited on
	if err != nil {
		return nil, nil, fmt.Errorf("metrics: %w", err)
	}
	defer f.Close()
	r := csv.NewReader(bufio.NewReader(f))
	r.FieldsPerRecord = -1 // rows of an older run may have fewer columns
	recs, err := r.ReadAll()
	if err != nil {
		return nil, nil, fmt.Errorf("metrics %s: %w", path, err)
	}
	if len(recs) == 0 {
		return nil, nil, fmt.Errorf("metrics %s: empty", path)
	}
	return recs[0], recs[1:], nil
}

// Truncate drops rows past step (a resumed run writes them again); a missing
// file is created. A path that cannot be opened or read (not a regular
// file, no permission) is an error naming it, and is left as it is.
func (l *MetricsLog) Truncate(step int) error {
	_, rows, err := ReadMetrics(l.Path)
	var nr *regfile.NotRegularError
	var pe *fs.PathError
	if errors.As(err, &nr) || (errors.As(err, &pe) && !errors.Is(err, fs.ErrNotExist)) {
		return err
	}
	if err != nil {
		return l.Create()
	}
	keep := [][]string{MetricsHeader}
	for _, r := range rows {
		if s, err := strconv.Atoi(r[1]); err == nil && s <= step {
			keep = append(keep, r)
		}
	}
	return l.write(keep, os.O_CREATE|os.O_TRUNC|os.O_WRONLY)
}
