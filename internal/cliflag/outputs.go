package cliflag

import (
	"fmt"
	"os"
	"path/filepath"
)

// CollisionError refuses two flags that name the same file when at least
// one of them is written: one output would overwrite the other (or an
// input).
type CollisionError struct {
	A, B string // the flags, "-results", "-predictions"
	Path string
}

func (e *CollisionError) Error() string {
	return fmt.Sprintf("%s and %s both name %s: give each output its own file", e.A, e.B, e.Path)
}

// Path is one file a flag names.
type Path struct {
	Flag   string // "-results"
	Path   string // "" = not given
	Output bool   // written by the command
}

// DistinctOutputs returns a *CollisionError for the first pair of paths
// that name the same file (by cleaned absolute path, or os.SameFile for
// existing files, so links and ./ spellings are caught) where at least
// one is an output.
func DistinctOutputs(paths ...Path) error {
	for i, a := range paths {
		for _, b := range paths[i+1:] {
			if a.Path == "" || b.Path == "" || !(a.Output || b.Output) {
				continue
			}
			if samePath(a.Path, b.Path) {
				return &CollisionError{A: a.Flag, B: b.Flag, Path: a.Path}
			}
		}
	}
	return nil
}

func samePath(a, b string) bool {
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	if err1 == nil && err2 == nil && aa == bb {
		return true
	}
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// OutputInDir returns a *CollisionError when path, the output a flag
// names, is one of the files that another writer puts in dir (the flag or
// key dirFlag, e.g. "train.out_dir"): path is dir itself, or a file in dir
// (by cleaned absolute path, or os.SameFile of the directories, so links
// and ./ spellings are caught) whose base name writes reports true. One
// output would replace the other.
func OutputInDir(flag, path, dirFlag, dir string, writes func(name string) bool) error {
	if path == "" || dir == "" {
		return nil
	}
	if samePath(path, dir) || (writes(filepath.Base(path)) && samePath(filepath.Dir(path), dir)) {
		return &CollisionError{A: flag, B: dirFlag, Path: path}
	}
	return nil
}
