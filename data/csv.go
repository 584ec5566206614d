package data

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/vitgo/vit/internal/regfile"
)

// MaxCSVBytes bounds a csv data set's file (data.train_csv, data.val_csv):
// a larger one is refused before it is read. An ImageNet-sized list
// (1.3 million rows) takes about 80 MB.
const MaxCSVBytes = 256 << 20

// CSVError is a csv data set's file that cannot be used, naming the file
// and the line (1 is the header; 0 when the error is about the whole file).
type CSVError struct {
	File string
	Line int
	Msg  string
	Err  error // the cause, if any
}

func (e *CSVError) Error() string {
	s := e.File
	if e.Line > 0 {
		s = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	s = "data: csv: " + s + ": " + e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *CSVError) Unwrap() error { return e.Err }

// csvRow is one image of a CSV file: its path as written, its label and
// its line.
type csvRow struct {
	path, label string
	line        int
}

// readCSV reads a csv data set's file: a header naming the columns path and
// label (in any order; other columns are ignored), then one row per image,
// quoted as encoding/csv (RFC 4180) reads it. Every row needs a path and a
// label; the files are not examined here.
func readCSV(file string) ([]csvRow, error) {
	f, st, err := regfile.Open(file)
	if err != nil {
		return nil, &CSVError{File: file, Msg: "open", Err: err}
	}
	defer f.Close()
	if st.Size() > MaxCSVBytes {
		return nil, &CSVError{File: file, Msg: fmt.Sprintf("%d bytes, more than the %d a data set's list may take", st.Size(), MaxCSVBytes)}
	}
	return decodeCSV(file, io.LimitReader(f, MaxCSVBytes))
}

// decodeCSV is readCSV on the file's bytes; every error is a *CSVError
// naming file.
func decodeCSV(file string, src io.Reader) ([]csvRow, error) {
	r := csv.NewReader(src)
	r.ReuseRecord = true
	head, err := r.Read()
	if err == io.EOF {
		return nil, &CSVError{File: file, Line: 1, Msg: "empty: want a header naming the columns path and label"}
	}
	if err != nil {
		return nil, csvReadError(file, err)
	}
	col := map[string]int{}
	for i, name := range head {
		name = strings.TrimSpace(strings.TrimPrefix(name, "\ufeff"))
		if _, dup := col[name]; dup && name != "" {
			return nil, &CSVError{File: file, Line: 1, Msg: fmt.Sprintf("the header names the column %q twice", name)}
		}
		col[name] = i
	}
	pathCol, okP := col["path"]
	labelCol, okL := col["label"]
	if !okP || !okL {
		return nil, &CSVError{File: file, Line: 1, Msg: fmt.Sprintf("the header %q lacks the column path or label (want a first line such as path,label)", strings.Join(head, ","))}
	}
	var rows []csvRow
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, csvReadError(file, err)
		}
		line, _ := r.FieldPos(0)
		p, label := rec[pathCol], rec[labelCol]
		switch {
		case strings.TrimSpace(p) == "":
			return nil, &CSVError{File: file, Line: line, Msg: "empty path"}
		case strings.TrimSpace(label) == "":
			return nil, &CSVError{File: file, Line: line, Msg: fmt.Sprintf("empty label for %s", p)}
		}
		rows = append(rows, csvRow{path: p, label: label, line: line})
	}
	if len(rows) == 0 {
		return nil, &CSVError{File: file, Msg: "lists no images (only a header)"}
	}
	return rows, nil
}

// csvReadError wraps an encoding/csv error (a wrong number of fields, a bad
// quote) with the file and its line.
func csvReadError(file string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &CSVError{File: file, Line: pe.Line, Msg: "malformed row", Err: pe.Err}
	}
	return &CSVError{File: file, Msg: "read", Err: err}
}

// csvPath resolves a row's path: relative to the CSV file's folder, or as
// written when absolute. ".." may lead out of that folder (as a relative
// path does in a shell).
func csvPath(file, p string) string {
	p = filepath.FromSlash(p)
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(filepath.Dir(file), p)
}

// openCSV opens split of the csv data set: the images data.train_csv or
// data.val_csv lists, classes the sorted labels of data.train_csv (so both
// splits share the label numbering, as folders take theirs from train/).
// The images are the folder data set's (a *Folder named csv): the same
// decoding, limits, data.skip_corrupt and class-list checks. Refused, with
// the file and line: a missing column, an empty path or label, an image
// that is missing or not a .png, .jpg, .jpeg or .gif file, an image listed
// twice in a file (also through a symbolic link), an image listed in both
// files, and a validation label the training file does not have.
func openCSV(cfg Config, split Split, inChans, limit int, mean, std []float64, log Logger) (*Folder, error) {
	trainRows, err := readCSV(cfg.TrainCSV)
	if err != nil {
		return nil, err
	}
	classSet := map[string]bool{}
	for _, r := range trainRows {
		classSet[r.label] = true
	}
	classes := make([]string, 0, len(classSet))
	for c := range classSet {
		classes = append(classes, c)
	}
	sort.Strings(classes)
	if err := CheckClassNames(cfg.TrainCSV, classes); err != nil {
		return nil, err
	}
	file, otherFile, rows, otherRows := cfg.TrainCSV, cfg.ValCSV, trainRows, []csvRow(nil)
	if split == Val {
		file, otherFile, otherRows = cfg.ValCSV, cfg.TrainCSV, trainRows
		if rows, err = readCSV(cfg.ValCSV); err != nil {
			return nil, err
		}
	} else if cfg.ValCSV != "" {
		if otherRows, err = readCSV(cfg.ValCSV); err != nil {
			return nil, err
		}
	}
	// The other split's images, by real path, where they resolve (only this
	// split's images must exist).
	other := map[string]int{}
	for _, r := range otherRows {
		if real, err := filepath.EvalSymlinks(csvPath(otherFile, r.path)); err == nil {
			other[real] = r.line
		}
	}
	label := make(map[string]int, len(classes))
	for i, c := range classes {
		label[c] = i
	}
	f := &Folder{name: NameCSV, csv: file, dir: filepath.Dir(file), classes: classes, outC: inChans, mean: mean, std: std,
		skipCorrupt: cfg.SkipCorrupt, maxPixels: int64(cfg.MaxPixels), budget: SharedBudget(), log: log}
	seen := map[string]int{}
	for _, r := range rows {
		l, ok := label[r.label]
		if !ok {
			return nil, &CSVError{File: file, Line: r.line, Msg: fmt.Sprintf("label %q is no class of %s (classes are the labels of data.train_csv)", r.label, cfg.TrainCSV)}
		}
		p := csvPath(file, r.path)
		st, err := os.Stat(p)
		if err != nil {
			return nil, &CSVError{File: file, Line: r.line, Msg: "image " + r.path, Err: err}
		}
		if st.IsDir() {
			return nil, &CSVError{File: file, Line: r.line, Msg: fmt.Sprintf("%s is a directory, not an image file", p)}
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return nil, &CSVError{File: file, Line: r.line, Msg: "image " + r.path, Err: err}
		}
		if first, dup := seen[real]; dup {
			return nil, &CSVError{File: file, Line: r.line, Msg: fmt.Sprintf("%s is listed again (first on line %d): each image must have one row", p, first)}
		}
		seen[real] = r.line
		if line, both := other[real]; both {
			return nil, &CSVError{File: file, Line: r.line, Msg: fmt.Sprintf("%s is also listed by %s, line %d: train and val must not share images", p, otherFile, line)}
		}
		if !imageExts[strings.ToLower(filepath.Ext(p))] {
			err := fmt.Errorf("not a .png, .jpg, .jpeg or .gif file")
			if f.skipCorrupt {
				f.skip(p, err)
				continue
			}
			return nil, &CSVError{File: file, Line: r.line, Msg: fmt.Sprintf("%s is not an image file (want .png, .jpg, .jpeg or .gif; data.skip_corrupt skips such files)", p)}
		}
		f.files = append(f.files, p)
		f.labels = append(f.labels, l)
	}
	// A training class every row of which was skipped (not an image file,
	// with data.skip_corrupt) would silently leave the problem smaller.
	if split == Train {
		for l, n := range f.perClass() {
			if n == 0 {
				return nil, &CSVError{File: file, Msg: fmt.Sprintf("class %q: none of its rows lists an image file (all skipped by data.skip_corrupt)", classes[l])}
			}
		}
	}
	where := func(l int) string { return fmt.Sprintf("the rows of %s labelled %q", file, classes[l]) }
	if err := f.finish(limit, cfg.Workers, where); err != nil {
		return nil, err
	}
	return f, nil
}

func openCSVSplit(cfg Config, split Split, inChans, limit int, mean, std []float64, log Logger) (Dataset, error) {
	return openCSV(cfg, split, inChans, limit, mean, std, log)
}
