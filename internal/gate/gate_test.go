//go:build unix

package gate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/vitgo/vit/internal/regfile"
)

// TestGate: each open of the file by the reader is met by one Wait, and each
// read returns what the matching Pass wrote.
func TestGate(t *testing.T) {
	g, err := New(filepath.Join(t.TempDir(), "x.png"))
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 2)
	go func() {
		for range 2 {
			Hold(g.Path())
			b, err := os.ReadFile(g.Path())
			if err != nil {
				got <- err.Error()
				continue
			}
			got <- string(b)
		}
	}()
	for _, want := range []string{"first", "second"} {
		h, err := g.Wait(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Pass([]byte(want)); err != nil {
			t.Fatal(err)
		}
		if s := <-got; s != want {
			t.Fatalf("read %q, want %q", s, want)
		}
	}
}

// TestGateNoReader: Wait ends with the context when nobody opens the file.
func TestGateNoReader(t *testing.T) {
	g, err := New(filepath.Join(t.TempDir(), "x.png"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := g.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait: %v, want context.Canceled", err)
	}
}

// TestInstall: after Install, regfile.Open of a guarded file waits at its
// gate, and reads what Pass wrote.
func TestInstall(t *testing.T) {
	defer func(f func(string)) { regfile.BeforeOpen = f }(regfile.BeforeOpen)
	Install()
	g, err := New(filepath.Join(t.TempDir(), "x.png"))
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		b, err := regfile.ReadFile(g.Path())
		if err != nil {
			got <- err.Error()
			return
		}
		got <- string(b)
	}()
	h, err := g.Wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		t.Fatalf("the read went on before Pass: %q", s)
	default:
	}
	if err := h.Pass([]byte("bytes")); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "bytes" {
		t.Fatalf("read %q", s)
	}
}
