package data

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/vitgo/vit/internal/regfile"
)

// imageExts are the file extensions a folder data set reads (any case).
var imageExts = map[string]bool{".png": true, ".jpg": true, ".jpeg": true, ".gif": true}

// Folder is a data set of image files in class folders:
// root/train/<class>/… and root/val/<class>/…, classes sorted by name and
// taken from root/train (so both splits share the label numbering). Files are
// listed and their headers checked by Open; pixels are decoded by Item.
type Folder struct {
	name        DatasetName // NameFolder, or NameCSV for a data set listed by a CSV file
	csv         string      // the CSV file listing the images (NameCSV)
	dir         string
	classes     []string
	otherSplit  []string // real paths of the other split's folder and class folders (splitRoots)
	files       []string
	labels      []int
	outC        int
	mean, std   []float64
	skipCorrupt bool
	maxPixels   int64
	budget      *Budget // decodes in flight (SharedBudget)
	log         Logger
	skipped     atomic.Int64
	released    atomic.Int64 // images handed back by the loader (releasePix)
}

var _ Dataset = (*Folder)(nil)

func openFolder(cfg Config, split Split, inChans, limit int, mean, std []float64, log Logger) (*Folder, error) {
	root := cfg.Root
	if err := checkDir(NameFolder, root, "train/<class>/ and val/<class>/ image folders"); err != nil {
		return nil, err
	}
	trainDir := filepath.Join(root, "train")
	classes, err := listClassDirs(trainDir)
	if err != nil {
		return nil, err
	}
	dir := trainDir
	if split == Val {
		dir = filepath.Join(root, "val")
		valClasses, err := listClassDirs(dir)
		if err != nil {
			return nil, err
		}
		known := map[string]bool{}
		for _, c := range classes {
			known[c] = true
		}
		for _, c := range valClasses {
			if !known[c] {
				return nil, fmt.Errorf("data: folder: class folder %s has no counterpart in %s (classes are taken from train/)", filepath.Join(dir, c), trainDir)
			}
		}
	}
	reals, err := classRoots(dir, classes)
	if err != nil {
		return nil, err
	}
	otherDir := filepath.Join(root, "val")
	if split == Val {
		otherDir = trainDir
	}
	other, err := splitRoots(dir, otherDir, classes, reals)
	if err != nil {
		return nil, err
	}
	f := &Folder{name: NameFolder, dir: dir, classes: classes, otherSplit: other, outC: inChans, mean: mean, std: std, skipCorrupt: cfg.SkipCorrupt, maxPixels: int64(cfg.MaxPixels), budget: SharedBudget(), log: log}
	for label, c := range classes {
		cdir := filepath.Join(dir, c)
		if _, err := os.Stat(cdir); os.IsNotExist(err) && split == Val {
			continue // a class may have no validation images
		}
		n0 := len(f.files)
		if err := f.listClass(cdir, label, reals); err != nil {
			return nil, err
		}
		if len(f.files) == n0 {
			return nil, fmt.Errorf("data: folder: class folder %s holds no images (want *.png, *.jpg, *.jpeg or *.gif)", cdir)
		}
	}
	if err := f.finish(limit, cfg.Workers, func(label int) string { return filepath.Join(dir, classes[label]) }); err != nil {
		return nil, err
	}
	return f, nil
}

// finish keeps the first limit listed files (0 = all), checks their
// headers with workers goroutines, and refuses a class that data.skip_corrupt
// left without images (where names the class's source) or a split left
// with none. The folder and csv data sets share it.
func (f *Folder) finish(limit, workers int, where func(label int) string) error {
	n := limitN(len(f.files), limit)
	f.files, f.labels = f.files[:n], f.labels[:n]
	listed := f.perClass()
	if err := f.checkHeaders(workers); err != nil {
		return err
	}
	// With skip_corrupt, a class left without images would silently shrink
	// the problem: the model would train on fewer classes than the folders name.
	for label, n := range f.perClass() {
		if n == 0 && listed[label] > 0 {
			return fmt.Errorf("data: %s: class %q (%s): none of its %d images is readable (all skipped by data.skip_corrupt)",
				f.Name(), f.classes[label], where(label), listed[label])
		}
	}
	if len(f.files) == 0 {
		return fmt.Errorf("data: %s: no readable images in %s", f.Name(), f.source())
	}
	return nil
}

// listClassDirs returns the sorted names of the class folders in dir; any
// other non-hidden entry is an error.
func listClassDirs(dir string) ([]string, error) {
	if err := checkDir(NameFolder, dir, "one folder per class"); err != nil {
		return nil, err
	}
	ents, err := regfile.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("data: folder: list %s: %w", dir, err)
	}
	var classes []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if !isDirFollow(filepath.Join(dir, e.Name()), e) {
			return nil, fmt.Errorf("data: folder: %s is not a directory; %s must hold only class folders", filepath.Join(dir, e.Name()), dir)
		}
		classes = append(classes, e.Name())
	}
	if len(classes) == 0 {
		return nil, fmt.Errorf("data: folder: %s has no class folders", dir)
	}
	sort.Strings(classes)
	if err := CheckClassNames(dir, classes); err != nil {
		return nil, err
	}
	return classes, nil
}

// isDirFollow reports whether the entry e of a listing is a directory or a
// symbolic link to one.
func isDirFollow(path string, e fs.DirEntry) bool {
	if e.IsDir() {
		return true
	}
	if e.Type()&fs.ModeSymlink == 0 {
		return false
	}
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// perClass counts the files of each label.
func (f *Folder) perClass() []int {
	n := make([]int, len(f.classes))
	for _, l := range f.labels {
		n[l]++
	}
	return n
}

// classRoots returns the real path (links resolved) of each class folder
// under dir, "" for one that does not exist; a class folder that is, holds
// or lies in another (train/square -> train/circle) is an error, since its
// files would be listed under two labels.
func classRoots(dir string, classes []string) ([]string, error) {
	reals := make([]string, len(classes))
	for i, c := range classes {
		r, err := filepath.EvalSymlinks(filepath.Join(dir, c))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("data: folder: %w", err)
		}
		reals[i] = r
		for j := range i {
			if reals[j] != "" && (within(r, reals[j]) || within(reals[j], r)) {
				return nil, &ClassOverlapError{A: filepath.Join(dir, classes[j]), B: filepath.Join(dir, c), RealA: reals[j], RealB: r}
			}
		}
	}
	return reals, nil
}

// splitRoots returns the real paths (links resolved) of the other split's
// folder otherDir and of each of its class folders; none when otherDir does
// not exist. A split folder or class folder of dir (class folders real at
// reals) that is, holds or lies in one of them (train/circle -> val/circle,
// val -> train) is a *SplitOverlapError: its images would be both trained
// and validated on.
func splitRoots(dir, otherDir string, classes, reals []string) ([]string, error) {
	realOther, err := filepath.EvalSymlinks(otherDir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("data: folder: %w", err)
	}
	roots := []string{realOther}
	if ents, err := regfile.ReadDir(otherDir); err == nil {
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), ".") {
				continue
			}
			p := filepath.Join(otherDir, e.Name())
			if r, err := filepath.EvalSymlinks(p); err == nil && isDirFollow(p, e) && !within(r, realOther) {
				roots = append(roots, r)
			}
		}
	}
	overlaps := func(r string) string {
		for _, o := range roots {
			if within(r, o) || within(o, r) {
				return o
			}
		}
		return ""
	}
	if realDir, err := filepath.EvalSymlinks(dir); err == nil {
		if o := overlaps(realDir); o != "" {
			return nil, &SplitOverlapError{Folder: dir, Real: realDir, Other: otherDir, OtherReal: o}
		}
	}
	for i, r := range reals {
		if r == "" {
			continue
		}
		if o := overlaps(r); o != "" {
			return nil, &SplitOverlapError{Folder: filepath.Join(dir, classes[i]), Real: r, Other: otherDir, OtherReal: o}
		}
	}
	return roots, nil
}

// SplitOverlapError refuses a split folder or class folder that is, holds
// or lies in the other split's folder or one of its class folders (through
// a symbolic link): its images would be validated on as well as trained on.
type SplitOverlapError struct {
	Folder    string // the class or split folder
	Real      string // where it leads
	Other     string // the other split's folder
	OtherReal string // the folder of the other split it overlaps, its real path
}

func (e *SplitOverlapError) Error() string {
	return fmt.Sprintf("data: folder: %s (%s) overlaps %s of the other split %s: train and val must not share images",
		e.Folder, e.Real, e.OtherReal, e.Other)
}

// ClassOverlapError refuses two class folders that are, or contain, the
// same directory (through a symbolic link): their images would have two
// labels.
type ClassOverlapError struct {
	A, B         string // the class folders
	RealA, RealB string // where they lead
}

func (e *ClassOverlapError) Error() string {
	return fmt.Sprintf("data: folder: class folders %s and %s hold the same files (%s, %s): each image must have one label",
		e.A, e.B, e.RealA, e.RealB)
}

// within reports whether path p is root or lies under it.
func within(p, root string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// listClass appends the image files under cdir (recursively, in lexical
// order, hidden entries ignored) with the given label. A symbolic link is
// followed only where it stays in its class and split: a link to a
// directory outside the class folder (ln -s .. train/circle/up), and a
// link to a file or directory in another class folder or in the other
// split (train/circle/x.png -> val/square/x.png) are skipped with a
// warning naming them, so no image is listed under a label that is not its
// folder's, nor both trained and validated on. reals are the class
// folders' real paths (classRoots).
func (f *Folder) listClass(cdir string, label int, reals []string) error {
	return f.walk(cdir, label, reals, map[string]bool{})
}

// walk lists dir into f. seen holds the real paths of the directories
// already listed for this class: a symbolic link back to one of them (a
// loop) is skipped with a warning.
func (f *Folder) walk(dir string, label int, reals []string, seen map[string]bool) error {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return fmt.Errorf("data: folder: %w", err)
	}
	if seen[real] {
		f.log.Warnf("data: folder: %s leads to %s, which is already listed (a symbolic link loop?): skipped", dir, real)
		return nil
	}
	seen[real] = true
	ents, err := regfile.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("data: folder: list %s: %w", dir, err)
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if e.Type()&fs.ModeSymlink != 0 {
			if why := f.linkLeaves(p, label, reals); why != "" {
				f.log.Warnf("data: folder: symbolic link %s %s: skipped", p, why)
				continue
			}
		}
		if isDirFollow(p, e) {
			if err := f.walk(p, label, reals, seen); err != nil {
				return err
			}
			continue
		}
		if !imageExts[strings.ToLower(filepath.Ext(p))] {
			if f.skipCorrupt {
				f.skip(p, fmt.Errorf("not a .png, .jpg, .jpeg or .gif file"))
				continue
			}
			return fmt.Errorf("data: folder: %s is not an image file (want .png, .jpg, .jpeg or .gif; data.skip_corrupt skips such files)", p)
		}
		f.files = append(f.files, p)
		f.labels = append(f.labels, label)
	}
	return nil
}

// linkLeaves says why the symbolic link p in class label must not be
// followed ("" when it may): a directory outside its class folder, or a
// file or directory inside another class folder or the other split.
func (f *Folder) linkLeaves(p string, label int, reals []string) string {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return fmt.Sprintf("is broken (%v)", err)
	}
	for _, o := range f.otherSplit {
		if within(real, o) {
			return fmt.Sprintf("leads to %s, in the other split (%s)", real, o)
		}
	}
	for l, r := range reals {
		if l != label && r != "" && within(real, r) {
			return fmt.Sprintf("leads to %s, in class %q", real, f.classes[l])
		}
	}
	if st, err := os.Stat(real); err == nil && st.IsDir() && !within(real, reals[label]) {
		return fmt.Sprintf("leads to the directory %s, out of its class folder %s", real, reals[label])
	}
	return ""
}

// checkHeaders decodes every file's header (not its pixels) in parallel;
// a bad file is an error naming it, or a counted, logged skip.
func (f *Folder) checkHeaders(workers int) error {
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	errs := make([]error, len(f.files))
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(f.files) {
					return
				}
				errs[i] = checkImageHeader(f.files[i], f.maxPixels)
			}
		}()
	}
	wg.Wait()
	keep := 0
	for i, err := range errs {
		if err != nil {
			if !f.skipCorrupt {
				return fmt.Errorf("data: %s: %w (data.skip_corrupt skips such files)", f.Name(), err)
			}
			f.skip(f.files[i], err)
			continue
		}
		f.files[keep], f.labels[keep] = f.files[i], f.labels[i]
		keep++
	}
	f.files, f.labels = f.files[:keep], f.labels[:keep]
	return nil
}

// headerPrefix is how much of a file checkImageHeader reads: enough for
// the header and the JPEG frame after the usual metadata segments.
const headerPrefix = 1 << 20

// checkImageHeader checks path's header as CheckEncoded does (pixels,
// decoded bytes, bytes the file needs) from its first bytes and its size,
// without decoding pixels.
func checkImageHeader(path string, maxPixels int64) error {
	f, st, err := regfile.Open(path)
	if err != nil {
		return fmt.Errorf("read image %s: %w", path, err)
	}
	defer f.Close()
	head, err := io.ReadAll(io.LimitReader(f, headerPrefix))
	if err != nil {
		return fmt.Errorf("read image %s: %w", path, err)
	}
	_, err = checkEncoded(path, head, st.Size(), maxPixels)
	return err
}

func (f *Folder) skip(path string, err error) {
	n := f.skipped.Add(1)
	f.log.Warnf("skip corrupt image %s (%d skipped so far): %v", path, n, err)
}

// Name returns "folder", or "csv" for images listed by a CSV file.
func (f *Folder) Name() string { return string(f.name) }

// source is where the images were listed: the split's folder or CSV file.
func (f *Folder) source() string {
	if f.csv != "" {
		return f.csv
	}
	return f.dir
}

// Len returns the number of image files.
func (f *Folder) Len() int { return len(f.files) }

// Classes returns the class folder names, sorted.
func (f *Folder) Classes() []string { return f.classes }

// Channels returns the channel count images are converted to.
func (f *Folder) Channels() int { return f.outC }

// Norm returns the normalization mean and std.
func (f *Folder) Norm() (mean, std []float64) { return f.mean, f.std }

// Path returns the file of item i.
func (f *Folder) Path(i int) string { return f.files[i] }

// Skipped returns how many files were skipped as corrupt so far (with
// data.skip_corrupt).
func (f *Folder) Skipped() int { return int(f.skipped.Load()) }

// Item decodes file i. An undecodable file is an error naming it; with
// data.skip_corrupt it is counted and logged and the next decodable item
// (cyclically) is returned in its place, label included.
func (f *Folder) Item(i int) (Image, int, error) {
	img, label, release, err := f.ItemHeld(i)
	release()
	return img, label, err
}

// ItemHeld is Item with the decode's share of the decode budget still
// held: the loader calls release once it has transformed the image, so the
// budget bounds the decoded pixels in flight, not only the decodes.
func (f *Folder) ItemHeld(i int) (Image, int, func(), error) {
	if i < 0 || i >= len(f.files) {
		return Image{}, 0, func() {}, fmt.Errorf("data: folder: item %d out of range [0,%d)", i, len(f.files))
	}
	for k := 0; k < len(f.files); k++ {
		j := (i + k) % len(f.files)
		img, held, err := decodeImageFileIn(f.files[j], f.outC, f.maxPixels, f.budget)
		if err == nil {
			return img, f.labels[j], func() { f.budget.Release(held) }, nil
		}
		if !f.skipCorrupt {
			return Image{}, 0, func() {}, fmt.Errorf("data: %s: %w", f.Name(), err)
		}
		f.skip(f.files[j], err)
	}
	return Image{}, 0, func() {}, fmt.Errorf("data: %s: no decodable image in %s", f.Name(), f.source())
}

// releasePix takes back the pixels of an image Item returned, for the next
// decode; the loader calls it once the image is transformed.
func (f *Folder) releasePix(img Image) {
	f.released.Add(1)
	putPix(img.Pix)
}
