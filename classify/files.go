package classify

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/vitgo/vit/data"
)

// ImageExts are the extensions (any case) a directory is searched for.
var ImageExts = []string{".png", ".jpg", ".jpeg", ".gif"}

// FileError says why a file was not classified.
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

// Result is one file's outcome in ClassifyFiles: its predictions, or Err (a
// *FileError) when it could not be read or decoded.
type Result struct {
	Index       int // position in the paths given to ClassifyFiles
	Path        string
	Predictions []Prediction
	Err         error
}

// ExpandPaths lists the files that args name, in order: a file as given
// (whatever its extension), a directory as the image files under it
// (recursively, lexical order, hidden entries and symlinked directories
// skipped), a pattern with * ? or [ as its matches (each expanded the same
// way). A symlink named in args is followed. A path that does not exist, or
// a pattern without a match, is kept as given so that classifying it
// reports it by name. A directory that cannot be read is skipped, as an
// unreadable file is; see ExpandPathsFunc to hear of it.
func ExpandPaths(args []string) ([]string, error) {
	return ExpandPathsFunc(args, nil)
}

// ExpandPathsFunc is ExpandPaths that calls skipped (if not nil) for each
// directory it could not read and each symbolic link to a directory it did
// not follow.
func ExpandPathsFunc(args []string, skipped func(path string, err error)) ([]string, error) {
	if skipped == nil {
		skipped = func(string, error) {}
	}
	var out []string
	for _, a := range args {
		names := []string{a}
		if _, err := os.Lstat(a); err != nil && strings.ContainsAny(a, "*?[") {
			m, err := filepath.Glob(a)
			if err != nil {
				return nil, fmt.Errorf("classify: pattern %q: %w", a, err)
			}
			if len(m) > 0 {
				names = m
			}
		}
		for _, n := range names {
			st, err := os.Stat(n)
			if err != nil || !st.IsDir() {
				out = append(out, n)
				continue
			}
			if l, err := os.Lstat(n); err == nil && l.Mode()&os.ModeSymlink != 0 {
				n += string(filepath.Separator) // walk the directory a named link points to
			}
			out = append(out, walkImages(n, skipped)...)
		}
	}
	return out, nil
}

// ErrLinkedDir says a symbolic link to a directory under a directory
// being listed was not followed.
var ErrLinkedDir = errors.New("a symbolic link to a directory: not followed")

func walkImages(dir string, skipped func(string, error)) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			skipped(p, err)
			if d != nil && d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if p != dir && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			if st, err := os.Stat(p); err == nil && st.IsDir() {
				skipped(p, ErrLinkedDir)
				return nil
			}
		}
		ext := strings.ToLower(filepath.Ext(p))
		for _, e := range ImageExts {
			if ext == e {
				out = append(out, p)
				break
			}
		}
		return nil
	})
	return out
}

// fileSet is a data.Dataset of image files for the loader. A file that
// cannot be read yields a 1×1 placeholder and its error in errs[i]; its
// consumer skips it. errs[i] is written by the worker that reads file i
// before the loader hands out its batch.
type fileSet struct {
	ctx   context.Context // ends a wait for the decode budget
	c     *Classifier
	paths []string
	errs  []error
}

var _ data.HeldDataset = (*fileSet)(nil)

func (s *fileSet) Name() string                { return "files" }
func (s *fileSet) Len() int                    { return len(s.paths) }
func (s *fileSet) Classes() []string           { return s.c.classes }
func (s *fileSet) Channels() int               { return s.c.c }
func (s *fileSet) Norm() (mean, std []float64) { return s.c.meanStd() }

func (s *fileSet) Item(i int) (data.Image, int, error) {
	img, label, release, err := s.ItemHeld(i)
	release()
	return img, label, err
}

// ItemHeld decodes file i within the classifier's decode budget, held
// until the loader has transformed the image.
func (s *fileSet) ItemHeld(i int) (data.Image, int, func(), error) {
	// An image costing more than the whole budget is refused, not decoded
	// alone: the budget is what the memory limits leave.
	dec := Decoder{MaxPixels: s.c.opts.MaxPixels, Budget: s.c.opts.Budget, NoOversize: true}
	img, release, err := dec.DecodeFile(s.ctx, s.paths[i])
	var u data.Image
	if err == nil {
		u, err = data.FromImage(img, s.c.c)
	}
	if err == nil && s.c.opts.CropPct != 0 {
		u, err = data.CenterCrop(u, s.c.h, s.c.w, s.c.opts.CropPct)
	}
	if err != nil {
		release()
		s.errs[i] = &FileError{Path: s.paths[i], Err: err}
		return data.Image{C: s.c.c, H: 1, W: 1, Pix: make([]uint8, s.c.c)}, 0, func() {}, nil
	}
	return u, 0, release, nil
}

// ClassifyFiles classifies image files, streaming them through the data
// package's parallel loader (Options.Workers decoders) in batches of
// max(16, PoolSize·MaxBatch) spread over the lanes (never more than the
// files given), and calls fn with each file's Result in the order of
// paths. A file that cannot be read is passed to fn with Err set; an error
// returned by fn (or a canceled ctx) stops the stream and is returned.
func (c *Classifier) ClassifyFiles(ctx context.Context, paths []string, fn func(Result) error) error {
	if len(paths) == 0 {
		return errors.New("classify: no files to classify")
	}
	ds := &fileSet{ctx: ctx, c: c, paths: paths, errs: make([]error, len(paths))}
	mean, std := c.meanStd()
	aug := data.DefaultAugmentConfig()
	aug.Interpolation = c.opts.Resize
	l, err := data.NewLoader(ds, data.LoaderConfig{
		BatchSize: min(len(paths), max(16, c.opts.PoolSize*c.opts.MaxBatch)), ImgH: c.h, ImgW: c.w, Workers: c.opts.Workers,
		Prefetch: 2, Augment: aug, Mixup: data.DefaultMixupConfig(), NumClasses: len(c.classes), Mean: mean, Std: std,
	})
	if err != nil {
		return fmt.Errorf("classify: %w", err)
	}
	it := l.Epoch(0, 0)
	defer it.Close()
	size := c.c * c.h * c.w
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		b, ok, err := it.Next()
		if err != nil {
			return fmt.Errorf("classify: %w", err)
		}
		if !ok {
			return nil
		}
		var xs [][]float32
		var at []int // batch row of each x
		for j := 0; j < b.N; j++ {
			if ds.errs[b.Indices[j]] == nil {
				xs = append(xs, b.X[j*size:(j+1)*size])
				at = append(at, j)
			}
		}
		preds, err := c.run(ctx, xs)
		if err != nil {
			var nf *NonFiniteError
			if errors.As(err, &nf) {
				return &FileError{Path: paths[b.Indices[at[nf.Index]]], Err: err}
			}
			return err
		}
		k := 0
		for j := 0; j < b.N; j++ {
			idx := b.Indices[j]
			r := Result{Index: idx, Path: paths[idx], Err: ds.errs[idx]}
			if r.Err == nil {
				r.Predictions = preds[k]
				k++
			}
			if err := fn(r); err != nil {
				return err
			}
		}
		b.Release()
	}
}
