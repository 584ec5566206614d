package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/vitgo/vit/classify"
	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/evaluate"
	"github.com/vitgo/vit/internal/atomicfile"
	"github.com/vitgo/vit/internal/cfgerr"
	"github.com/vitgo/vit/internal/cliflag"
	"github.com/vitgo/vit/internal/meminfo"
	"github.com/vitgo/vit/internal/memory"
	"github.com/vitgo/vit/internal/signals"
)

// imageFlags are the flags of the -images mode (classify unlabelled images).
type imageFlags struct {
	paths     cliflag.Strings
	topk      *int
	cropPct   *float64
	resize    *string
	strict    *bool
	batch     *int
	workers   *int
	maxPixels *int64
}

func addImageFlags(fs *flag.FlagSet) *imageFlags {
	f := &imageFlags{}
	fs.Var(&f.paths, "images", "classify these images: files, directories (recursive) or globs; more paths may follow as arguments")
	f.topk = fs.Int("topk", 5, "-images: classes to report per image")
	f.cropPct = fs.Float64("crop-pct", 0, "-images: timm's eval crop (resize the short side to img_size/crop_pct, centre crop); 0 = resize the whole image as training evaluates")
	f.resize = fs.String("resize", "bilinear", "-images: resize without -crop-pct: bilinear (the trainer's default) or bilinear_aa")
	f.strict = fs.Bool("strict", false, "-images: fail on the first unreadable image instead of skipping it")
	f.batch = fs.Int("batch", 8, "-images: largest batch per forward pass (at most the number of images; refused if the memory estimate exceeds the machine)")
	f.workers = fs.Int("workers", 0, "-images: decoding goroutines (0 = GOMAXPROCS)")
	f.maxPixels = fs.Int64("max-pixels", classify.DefaultMaxPixels, "-images: largest image in pixels, read from its header before decoding (at most 1000000000)")
	return f
}

// parseInterleaved parses flags that may follow positional arguments (the
// shell's expansion of -images dir/*.png), returning the positional ones.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var rest []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return rest, nil
		}
		if args[0] == "--" {
			return append(rest, args[1:]...), nil
		}
		rest = append(rest, args[0])
		args = args[1:]
	}
}

// runImages classifies the images named by -images and the positional
// arguments, printing the top-k classes of each and writing -predictions.
func runImages(f *imageFlags, rest []string, o evaluate.Options, preds string, fs *flag.FlagSet, stdout, stderr io.Writer) int {
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "eval: "+format+"\n", a...)
		return code
	}
	if msg := f.refused(fs, o); msg != "" {
		return fail(2, "%s", msg)
	}
	meminfo.LimitRuntime() // under ulimit -v, collect before the limit, not crash at it
	var pw *predWriter
	if preds != "" {
		var err error
		if pw, err = newPredWriter(preds, *f.topk); err != nil {
			return fail(2, "-predictions: %v", err)
		}
		defer pw.abort()
	}
	paths, err := classify.ExpandPathsFunc(append(append([]string(nil), f.paths...), rest...), func(p string, err error) {
		if errors.Is(err, classify.ErrLinkedDir) {
			fmt.Fprintf(stderr, "eval: skipped %s: %v\n", p, err)
			return
		}
		fmt.Fprintf(stderr, "eval: skipped directory %v\n", err)
	})
	if err != nil {
		return fail(1, "%v", err)
	}
	if len(paths) == 0 {
		return fail(1, "-images: no image files found")
	}
	// No batch is planned larger than the images at hand (-batch 65536 for
	// 20 images builds graphs of 20), and no more workers than images.
	c, err := classify.Load(o.Checkpoint, classify.Options{
		ImgSize: o.ImgSize, PosInterp: o.Interp, Resize: data.Interpolation(*f.resize), CropPct: *f.cropPct, TopK: *f.topk,
		MaxBatch: min(*f.batch, len(paths)), Workers: min(*f.workers, len(paths)), Precision: o.Precision,
		MaxPixels: *f.maxPixels,
	})
	if code, msg := f.loadRefusal(err, o); msg != "" {
		return fail(code, "%s", msg)
	}
	if err != nil {
		return fail(1, "%v", err)
	}
	defer c.Close()
	for _, n := range c.Notes() {
		fmt.Fprintf(stdout, "note: %s\n", n)
	}
	ctx, stop := signals.Context(context.Background(), stderr, "stopping")
	defer stop()
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	var done, skipped int
	start := time.Now()
	err = c.ClassifyFiles(ctx, paths, func(r classify.Result) error {
		if r.Err != nil {
			if *f.strict {
				return r.Err
			}
			skipped++
			fmt.Fprintf(stderr, "eval: skipped %s\n", f.describe(r.Err))
			return nil
		}
		done++
		printResult(out, r)
		if pw != nil {
			return pw.write(r)
		}
		return nil
	})
	out.Flush()
	if ctx.Err() != nil { // only a signal cancels ctx
		return fail(signals.ExitStatus(ctx), "interrupted after %d images; no predictions written", done)
	}
	if err != nil {
		var fe *classify.FileError
		if errors.As(err, &fe) && *f.strict {
			return fail(1, "%s (-strict)", f.describe(err))
		}
		return fail(1, "%v", err)
	}
	secs := time.Since(start).Seconds()
	fmt.Fprintf(stderr, "eval: classified %d images, skipped %d, in %.1f s (%.1f img/s)\n", done, skipped, secs, float64(done)/secs)
	if done == 0 {
		return fail(1, "no image could be classified")
	}
	if pw != nil {
		if err := pw.commit(); err != nil {
			return fail(1, "-predictions: %v", err)
		}
	}
	return 0
}

// refused says why the flags cannot run with -images, or "".
func (f *imageFlags) refused(fs *flag.FlagSet, o evaluate.Options) string {
	var extra []string
	fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "config", "set", "results", "confusion-png":
			extra = append(extra, "-"+fl.Name)
		}
	})
	switch {
	case len(extra) > 0:
		return strings.Join(extra, ", ") + " not used with -images"
	case o.EMA:
		return "-ema is not supported with -images"
	case *f.topk <= 0 || *f.batch <= 0 || *f.workers < 0:
		return "-topk and -batch must be positive, -workers ≥ 0"
	case *f.maxPixels < 1 || *f.maxPixels > data.MaxMaxPixels:
		return fmt.Sprintf("-max-pixels %d: want 1 to %d", *f.maxPixels, data.MaxMaxPixels)
	}
	return ""
}

// loadRefusal says which flag of -images made classify.Load refuse, with
// status 2, or "" when none did: a -batch the lanes cannot hold, a size
// (-img-size) whose one image the machine cannot hold or the model cannot
// take. It names the flags the user can set, never the config keys
// (train.eval_batch_size, model.img_size) that -images has no way to set;
// a checkpoint whose one image the machine cannot hold at its own size is
// status 1, named with the memory it needs.
func (f *imageFlags) loadRefusal(err error, o evaluate.Options) (int, string) {
	var me *classify.MemoryError
	if errors.As(err, &me) {
		return 2, fmt.Sprintf("-batch %d: %v", *f.batch, err)
	}
	size := "(the checkpoint's)"
	if o.ImgSize != nil {
		size = fmt.Sprintf("%dx%d", o.ImgSize[0], o.ImgSize[1])
	}
	var mem *memory.Error
	switch {
	case errors.As(err, &mem) && o.ImgSize != nil:
		return 2, fmt.Sprintf("-img-size %s with -batch %d: %v: lower -img-size", size, *f.batch, mem)
	case mem != nil:
		return 1, fmt.Sprintf("%s: one image at the checkpoint's size: %v", o.Checkpoint, mem)
	}
	var ce *cfgerr.Error
	if errors.As(err, &ce) && ce.Key == "model.img_size" && o.ImgSize != nil {
		return 2, fmt.Sprintf("-img-size %s: %v", size, ce.Err)
	}
	return 0, ""
}

// describe says why a file was skipped, naming the flag (-max-pixels) where
// the data package's error names its config key (data.max_pixels), which
// -images cannot set.
func (f *imageFlags) describe(err error) string {
	var fe *classify.FileError
	if !errors.As(err, &fe) {
		return err.Error()
	}
	var tl *classify.TooLargeError
	var dt *data.DecodedTooLargeError
	var ob *classify.OverBudgetError
	switch {
	case errors.As(err, &ob):
		return fmt.Sprintf("%s: needs %d bytes to decode, more than the whole decode budget of %d bytes (half of what this process's memory limits leave: ulimit -v, the cgroup, MemAvailable)",
			fe.Path, ob.Cost, ob.Budget)
	case errors.As(err, &tl):
		return fmt.Sprintf("%s: the image is %dx%d = %d pixels, over -max-pixels %d (refused before decoding)",
			fe.Path, tl.Width, tl.Height, int64(tl.Width)*int64(tl.Height), tl.Limit)
	case errors.As(err, &dt):
		return fmt.Sprintf("%s: the %dx%d %s image decodes to %d bytes, over the limit of %d bytes (%d × -max-pixels; refused before decoding)",
			fe.Path, dt.Width, dt.Height, dt.Format, dt.Bytes, dt.Limit, data.BytesPerMaxPixel)
	}
	return err.Error()
}

// printResult writes one image's line: its path, then each prediction's
// label and probability.
func printResult(out io.Writer, r classify.Result) {
	fmt.Fprintf(out, "%s:", r.Path)
	for i, p := range r.Predictions {
		sep := ","
		if i == 0 {
			sep = ""
		}
		fmt.Fprintf(out, "%s %s %.4f", sep, p.Label, p.Prob)
	}
	fmt.Fprintln(out)
}

// predWriter streams predictions as CSV, JSON or JSON lines (by the file's
// extension) into a temp file renamed into place on success.
type predWriter struct {
	path string
	f    *atomicfile.File
	w    *bufio.Writer
	cw   *csv.Writer
	kind string
	n    int
}

func newPredWriter(path string, k int) (*predWriter, error) {
	kind := strings.ToLower(filepath.Ext(path))
	if kind != ".csv" && kind != ".json" && kind != ".jsonl" {
		return nil, fmt.Errorf("%s: want a .csv, .json or .jsonl file", path)
	}
	atomicfile.RemoveStaleFor(path) // left by a process killed while writing path
	f, err := atomicfile.Create(path)
	if err != nil {
		return nil, err
	}
	p := &predWriter{path: path, f: f, w: bufio.NewWriter(f), kind: kind}
	switch kind {
	case ".csv":
		p.cw = csv.NewWriter(p.w)
		head := []string{"path"}
		for i := 1; i <= k; i++ {
			head = append(head, fmt.Sprintf("top%d_class", i), fmt.Sprintf("top%d_prob", i))
		}
		p.cw.Write(head)
	case ".json":
		p.w.WriteString("[")
	}
	return p, nil
}

// predRecord is one JSON record. Path is the file name as JSON can hold
// it; a name that is not valid UTF-8 (which JSON would rewrite with U+FFFD,
// naming no file) is also given exactly, as base64 in PathBytes.
type predRecord struct {
	Path        string                `json:"path"`
	PathBytes   []byte                `json:"path_bytes,omitempty"`
	Predictions []classify.Prediction `json:"predictions"`
}

func (p *predWriter) write(r classify.Result) error {
	if p.cw != nil {
		rec := []string{r.Path}
		for _, q := range r.Predictions {
			rec = append(rec, q.Label, strconv.FormatFloat(q.Prob, 'g', 6, 64))
		}
		return p.cw.Write(rec)
	}
	rec := predRecord{Path: r.Path, Predictions: r.Predictions}
	if !utf8.ValidString(r.Path) {
		rec.PathBytes = []byte(r.Path)
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if p.kind == ".json" {
		if p.n > 0 {
			p.w.WriteString(",")
		}
		p.w.WriteString("\n  ")
	}
	p.n++
	p.w.Write(b)
	if p.kind == ".jsonl" {
		p.w.WriteString("\n")
	}
	return nil
}

func (p *predWriter) commit() error {
	if p.kind == ".json" {
		p.w.WriteString("\n]\n")
	}
	if p.cw != nil {
		p.cw.Flush()
	}
	if err := p.w.Flush(); err != nil {
		return fmt.Errorf("%s: %w", p.path, err)
	}
	return p.f.Commit()
}

// abort removes the temp file unless commit renamed it.
func (p *predWriter) abort() { p.f.Abort() }
