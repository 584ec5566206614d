//go:build unix

package gate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
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
