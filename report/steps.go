package report

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/vitgo/vit/internal/atomicfile"
	"github.com/vitgo/vit/internal/regfile"
)

// StepsFile is the per-step record a run leaves beside metrics.csv.
const StepsFile = "steps.csv"

// StepsHeader is steps.csv's first line.
var StepsHeader = []string{"step", "epoch", "lr", "loss", "grad_norm", "img_per_s"}

// StepRow is one line of steps.csv, written every train.log_every steps
// whatever the log level.
type StepRow struct {
	Step     int     // steps done, this one included (as metrics.csv's step)
	Epoch    int     // the epoch the step belongs to, 1-based (as metrics.csv's epoch)
	LR       float64 // the learning rate of the step's update
	Loss     float64 // the step's training loss (this batch, not a mean)
	GradNorm float64 // global gradient norm before clipping
	ImgPerS  float64 // training throughput since the previous row
}

// StepsLog appends rows to steps.csv. A resumed run first drops the rows
// after its checkpoint's step (Resume), so the file continues without gaps
// or duplicates.
type StepsLog struct {
	Path string
	f    *os.File
}

// Create starts the file with its header, replacing any old one.
func (l *StepsLog) Create() error {
	return l.rewrite(nil)
}

// Resume keeps the complete rows up to and including step (a resumed run
// writes the later ones again) and drops the rest, a row cut short by a
// killed process included. A missing file is created.
func (l *StepsLog) Resume(step int) error {
	src, err := regfile.ReadFile(l.Path) // a FIFO is refused, not waited on
	if os.IsNotExist(err) {
		return l.Create()
	}
	if err != nil {
		return fmt.Errorf("steps: %w", err)
	}
	var keep [][]byte
	lines := bytes.SplitAfter(src, []byte("\n"))
	for i, line := range lines {
		if i == 0 || !bytes.HasSuffix(line, []byte("\n")) {
			continue // the header, or a last line without its newline
		}
		f := strings.SplitN(string(line), ",", 2)
		if s, err := strconv.Atoi(f[0]); err == nil && s <= step && len(f) == 2 {
			keep = append(keep, line)
		}
	}
	return l.rewrite(keep)
}

// rewrite replaces the file with the header and lines, atomically. (Append
// then appends: a row cut short by a killed process is dropped by Resume.)
func (l *StepsLog) rewrite(lines [][]byte) error {
	l.Close()
	var b bytes.Buffer
	b.WriteString(strings.Join(StepsHeader, ",") + "\n")
	for _, line := range lines {
		b.Write(line)
	}
	if err := atomicfile.WriteBytes(l.Path, b.Bytes()); err != nil {
		return fmt.Errorf("steps: %w", err)
	}
	return nil
}

// Append adds one row, in a single write.
func (l *StepsLog) Append(r StepRow) error {
	if l.f == nil {
		f, _, err := regfile.OpenFile(l.Path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return fmt.Errorf("steps: %w", err)
		}
		l.f = f
	}
	line := fmt.Sprintf("%d,%d,%s,%s,%s,%.1f\n", r.Step, r.Epoch, strconv.FormatFloat(r.LR, 'g', -1, 64),
		strconv.FormatFloat(r.Loss, 'g', -1, 32), strconv.FormatFloat(r.GradNorm, 'g', 7, 64), r.ImgPerS)
	if _, err := l.f.WriteString(line); err != nil {
		return fmt.Errorf("steps %s: %w", l.Path, err)
	}
	return nil
}

// Close closes the file; Append opens it again.
func (l *StepsLog) Close() error {
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// ReadSteps parses a steps.csv.
func ReadSteps(path string) ([]StepRow, error) {
	src, err := regfile.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("steps: %w", err)
	}
	recs, err := csv.NewReader(bytes.NewReader(src)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("steps %s: %w", path, err)
	}
	if len(recs) == 0 || strings.Join(recs[0], ",") != strings.Join(StepsHeader, ",") {
		return nil, fmt.Errorf("steps %s: header is not %s", path, strings.Join(StepsHeader, ","))
	}
	rows := make([]StepRow, 0, len(recs)-1)
	for i, rec := range recs[1:] {
		var r StepRow
		var errs [6]error
		r.Step, errs[0] = strconv.Atoi(rec[0])
		r.Epoch, errs[1] = strconv.Atoi(rec[1])
		r.LR, errs[2] = strconv.ParseFloat(rec[2], 64)
		r.Loss, errs[3] = strconv.ParseFloat(rec[3], 64)
		r.GradNorm, errs[4] = strconv.ParseFloat(rec[4], 64)
		r.ImgPerS, errs[5] = strconv.ParseFloat(rec[5], 64)
		for j, err := range errs {
			if err != nil {
				return nil, fmt.Errorf("steps %s line %d: %s: %w", path, i+2, StepsHeader[j], err)
			}
		}
		rows = append(rows, r)
	}
	return rows, nil
}
