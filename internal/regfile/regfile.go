// Package regfile opens the files a user names (checkpoints, configs, images,
// data files) without blocking: anything but a regular file — a named pipe,
// a device, a socket, a directory — is refused with a *NotRegularError
// naming the path and its type, before a read can wait on it.
package regfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// BeforeOpen, when set, is called with each path before Open looks at it.
// It is a test seam, nil in every program: a test's child process sets it
// (internal/gate) to be held at a known read while the test acts.
var BeforeOpen func(path string)

// NotRegularError refuses a path that is not a regular file.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file", e.Path, Kind(e.Mode))
}

// Kind names a file type for messages: "a named pipe (FIFO)", "a directory", ….
func Kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeIrregular != 0:
		return "an irregular file"
	}
	return "a regular file"
}

// Open opens path for reading and returns it with its FileInfo. The type is
// checked twice: by Stat before the open (so a FIFO is never opened for a
// blocking read) and by the open file's Stat after it (so a path swapped in
// between is caught); the open itself does not block (O_NONBLOCK where the
// system has it). Symbolic links are followed.
func Open(path string) (*os.File, fs.FileInfo, error) {
	if BeforeOpen != nil {
		BeforeOpen(path)
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, nil, &NotRegularError{Path: path, Mode: st.Mode()}
	}
	f, err := os.OpenFile(path, os.O_RDONLY|nonblock, 0)
	if err != nil {
		return nil, nil, err
	}
	if st, err = f.Stat(); err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, &NotRegularError{Path: path, Mode: st.Mode()}
	}
	return f, st, nil
}

// OpenFile is os.OpenFile for a regular file, for writing or appending as
// well as reading (os.O_APPEND|os.O_CREATE|os.O_WRONLY, os.O_RDWR, …): an
// existing path that is not a regular file is refused with a
// *NotRegularError before it is opened, the open itself does not block
// (O_NONBLOCK where the system has it: a FIFO opened for writing with no
// reader fails at once instead of waiting for one), and the open file's
// type is checked again, so a path swapped in between is caught too. A
// missing file is created when flag has os.O_CREATE. Symbolic links are
// followed.
func OpenFile(path string, flag int, perm fs.FileMode) (*os.File, fs.FileInfo, error) {
	if BeforeOpen != nil {
		BeforeOpen(path)
	}
	st, err := os.Stat(path)
	switch {
	case err == nil && !st.Mode().IsRegular():
		return nil, nil, &NotRegularError{Path: path, Mode: st.Mode()}
	case err != nil && !(flag&os.O_CREATE != 0 && errors.Is(err, fs.ErrNotExist)):
		return nil, nil, err
	}
	f, err := os.OpenFile(path, flag|nonblock, perm)
	if err != nil {
		// A FIFO swapped in after the Stat fails the non-blocking open
		// (ENXIO for a writer without a reader): say what it is.
		if st, serr := os.Stat(path); serr == nil && !st.Mode().IsRegular() {
			return nil, nil, &NotRegularError{Path: path, Mode: st.Mode()}
		}
		return nil, nil, err
	}
	if st, err = f.Stat(); err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, &NotRegularError{Path: path, Mode: st.Mode()}
	}
	return f, st, nil
}

// Check returns a *NotRegularError unless path (links followed) is a
// regular file; nothing is opened.
func Check(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return &NotRegularError{Path: path, Mode: st.Mode()}
	}
	return nil
}

// ReadFile is os.ReadFile through Open.
func ReadFile(path string) ([]byte, error) {
	f, st, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, 0, st.Size()+1)
	for {
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

// WriteFile is os.WriteFile through OpenFile: it creates or truncates the
// regular file path and writes b, refusing a FIFO, device or directory
// instead of blocking in its open. (A run's files are written atomically
// with internal/atomicfile; this is for plain outputs.)
func WriteFile(path string, b []byte, perm fs.FileMode) error {
	f, _, err := OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
