package regfile

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// NotDirError refuses a path that is listed as a directory but is not one.
type NotDirError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotDirError) Error() string {
	return fmt.Sprintf("%s is %s, not a directory", e.Path, Kind(e.Mode))
}

// ReadDir is os.ReadDir that cannot wait on a FIFO: the type is checked by
// Stat before the open, and the open itself is O_DIRECTORY|O_NONBLOCK where
// the system has them, so a path swapped for a named pipe in between fails
// at once instead of blocking where no signal ends the wait. Anything but a
// directory is a *NotDirError naming the path and its type. The entries
// are sorted by name, as os.ReadDir sorts them. Symbolic links are
// followed.
func ReadDir(path string) ([]fs.DirEntry, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, &NotDirError{Path: path, Mode: st.Mode()}
	}
	return readDir(path)
}

// readDir opens path as a directory without a Stat first (ReadDir's
// second line of defence, tested alone) and lists it.
func readDir(path string) ([]fs.DirEntry, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|nonblock|directory, 0)
	if err != nil {
		if st, err2 := os.Stat(path); err2 == nil && !st.IsDir() {
			return nil, &NotDirError{Path: path, Mode: st.Mode()}
		}
		return nil, err
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return ents, err
}

// WalkDir is filepath.WalkDir listing each directory through ReadDir: the
// same order, the same calls of fn and the same meaning of fs.SkipDir and
// fs.SkipAll, but no directory's open can block.
func WalkDir(root string, fn fs.WalkDirFunc) error {
	info, err := os.Lstat(root)
	if err != nil {
		err = fn(root, nil, err)
	} else {
		err = walkDir(root, fs.FileInfoToDirEntry(info), fn)
	}
	if err == fs.SkipDir || err == fs.SkipAll {
		return nil
	}
	return err
}

func walkDir(path string, d fs.DirEntry, fn fs.WalkDirFunc) error {
	if err := fn(path, d, nil); err != nil || !d.IsDir() {
		if err == fs.SkipDir && d.IsDir() {
			err = nil // the directory is skipped, its siblings are not
		}
		return err
	}
	ents, err := ReadDir(path)
	if err != nil {
		// As filepath.WalkDir: a second call reports the listing's error.
		if err = fn(path, d, err); err != nil {
			if err == fs.SkipDir && d.IsDir() {
				err = nil
			}
			return err
		}
	}
	for _, e := range ents {
		if err := walkDir(filepath.Join(path, e.Name()), e, fn); err != nil {
			if err == fs.SkipDir {
				break
			}
			return err
		}
	}
	return nil
}
