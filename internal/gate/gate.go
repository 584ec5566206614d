//go:build unix

// Package gate holds a child process at a known point of its work, for tests
// that must act (send a signal, say) while the child is there, without
// waiting by the clock. A Gate is a named pipe (FIFO) put where the child
// will read an input file, such as one image of a folder data set: the
// child's open blocks until the test opens the other end, which tells the
// test the child has reached the read (Wait), and its read blocks until the
// test writes the file's bytes (Pass). Each open by the child is met by its
// own Wait: a later open (the same file read again) blocks until the test
// waits for it.
package gate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// Gate is a named pipe standing in for an input file.
type Gate struct{ path string }

// New makes a named pipe at path.
func New(path string) (*Gate, error) {
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		return nil, fmt.Errorf("gate: mkfifo %s: %w", path, err)
	}
	return &Gate{path: path}, nil
}

// Path returns the named pipe's path.
func (g *Gate) Path() string { return g.path }

// renew puts a new named pipe at g's path, by way of a hidden name beside it
// (data sets skip hidden files).
func (g *Gate) renew() error {
	tmp := filepath.Join(filepath.Dir(g.path), "."+filepath.Base(g.path)+".next")
	if err := syscall.Mkfifo(tmp, 0o644); err != nil {
		return fmt.Errorf("gate: mkfifo %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, g.path); err != nil {
		return fmt.Errorf("gate: %w", err)
	}
	return nil
}

// Held is the test's end of a gate that the child has opened: the child's
// read blocks until Pass.
type Held struct{ f *os.File }

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
		f, err := os.OpenFile(g.path, os.O_WRONLY, 0) // blocks until a reader opens
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
		return &Held{o.f}, nil
	case <-ctx.Done():
		// Release the goroutine's open with a reader of our own.
		if r, err := os.OpenFile(g.path, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			if o := <-ch; o.f != nil {
				o.f.Close()
			}
			r.Close()
		}
		return nil, fmt.Errorf("gate: no reader opened %s: %w", g.path, ctx.Err())
	}
}

// Pass gives the child b as the file's content and ends it, which lets the
// child's read return. A child that reads only part of b (a header) and
// closes its end is no error.
func (h *Held) Pass(b []byte) error {
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
