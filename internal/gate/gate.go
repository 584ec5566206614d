//go:build unix

// Package gate holds a child process at a known point of its work, for tests
// that must act (send a signal, say) while the child is there, without
// waiting by the clock. A Gate guards an input file that the child reads
// through internal/regfile, such as one image of a folder data set: in a
// child that called Install, regfile.Open of that file first opens the
// gate's named pipe (a hidden file beside it, which data sets skip) and
// reads it to its end. That open blocks until the test opens the other end,
// which tells the test the child has reached the read (Wait), and the read
// until the test writes the file's bytes (Pass), which then lie in the file
// itself, a regular one. Each open by the child is met by its own Wait: a
// later open (the same file read again) blocks until the test waits for it.
package gate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/vitgo/vit/internal/regfile"
)

// Gate guards the input file at path.
type Gate struct{ path string }

// pipeOf is the named pipe guarding the file at path.
func pipeOf(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".gate")
}

// New guards path: an empty regular file there (so that a folder listing
// sees it) and the named pipe beside it.
func New(path string) (*Gate, error) {
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		return nil, fmt.Errorf("gate: %w", err)
	}
	if err := syscall.Mkfifo(pipeOf(path), 0o644); err != nil {
		return nil, fmt.Errorf("gate: mkfifo %s: %w", pipeOf(path), err)
	}
	return &Gate{path: path}, nil
}

// Path returns the guarded file's path.
func (g *Gate) Path() string { return g.path }

// Install makes regfile.Open wait at the gate of every file that has one:
// the child's side, called in the child process before its work.
func Install() {
	regfile.BeforeOpen = Hold
}

// Hold waits at path's gate, if it has one: it reads the named pipe to its
// end, then returns.
func Hold(path string) {
	st, err := os.Lstat(pipeOf(path))
	if err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		return
	}
	f, err := os.Open(pipeOf(path)) // blocks until the test's Wait opens the other end
	if err != nil {
		return
	}
	io.Copy(io.Discard, f) // until Pass closes it
	f.Close()
}

// renew puts a new named pipe in place of the gate's, by way of another
// hidden name beside it.
func (g *Gate) renew() error {
	tmp := filepath.Join(filepath.Dir(g.path), "."+filepath.Base(g.path)+".next")
	if err := syscall.Mkfifo(tmp, 0o644); err != nil {
		return fmt.Errorf("gate: mkfifo %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, pipeOf(g.path)); err != nil {
		return fmt.Errorf("gate: %w", err)
	}
	return nil
}

// Held is the test's end of a gate that the child has opened: the child's
// read blocks until Pass.
type Held struct {
	f    *os.File
	path string
}

// Wait returns once the child has opened the gate to read it, or with
// ctx's error (ctx ending when the child has exited, or at a generous
// deadline, keeps a test from hanging).
func (g *Gate) Wait(ctx context.Context) (*Held, error) {
	type opened struct {
		f   *os.File
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		f, err := os.OpenFile(pipeOf(g.path), os.O_WRONLY, 0) // blocks until a reader opens
		ch <- opened{f, err}
	}()
	select {
	case o := <-ch:
		if o.err != nil {
			return nil, fmt.Errorf("gate: %w", o.err)
		}
		// A fresh pipe in its place, for the child's next open: this one
		// is the open reader's alone.
		if err := g.renew(); err != nil {
			o.f.Close()
			return nil, err
		}
		return &Held{o.f, g.path}, nil
	case <-ctx.Done():
		// Release the goroutine's open with a reader of our own.
		if r, err := os.OpenFile(pipeOf(g.path), os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			if o := <-ch; o.f != nil {
				o.f.Close()
			}
			r.Close()
		}
		return nil, fmt.Errorf("gate: no reader opened %s: %w", g.path, ctx.Err())
	}
}

// Pass makes b the file's content and ends the child's read of the named
// pipe, which lets its open of the file go on. A child that closed its end
// early is no error.
func (h *Held) Pass(b []byte) error {
	if err := os.WriteFile(h.path, b, 0o644); err != nil {
		h.f.Close()
		return fmt.Errorf("gate: %w", err)
	}
	_, err := h.f.Write(b)
	cerr := h.f.Close()
	if err != nil && !errors.Is(err, syscall.EPIPE) {
		return fmt.Errorf("gate: %w", err)
	}
	return cerr
}

// Serve passes b to each open of the gate until ctx ends: a gate left open,
// for the parts of a test that need no hold.
func (g *Gate) Serve(ctx context.Context, b []byte) {
	for {
		h, err := g.Wait(ctx)
		if err != nil {
			return
		}
		h.Pass(b)
	}
}
