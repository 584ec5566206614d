package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRoundWall(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{{1234 * time.Millisecond, "1.2s"}, {83*time.Second + 600*time.Millisecond, "1m24s"}} {
		if got := RoundWall(c.d); got != c.want {
			t.Errorf("RoundWall(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}

func TestProvenance(t *testing.T) {
	dir := t.TempDir()
	ckpt := filepath.Join(dir, "last.safetensors")
	if got := Provenance(ckpt); got != "" {
		t.Errorf("no config.yaml: %q", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := Provenance(ckpt); !strings.Contains(got, filepath.Join(dir, "config.yaml")) {
		t.Errorf("with config.yaml: %q", got)
	}
}

func TestDecades(t *testing.T) {
	ts := Decades{}.Ticks(2e-4, 50)
	if len(ts) != 7 || ts[0].Value != 1e-4 || ts[len(ts)-1].Value != 100 {
		t.Fatalf("ticks %v", ts)
	}
	for _, tk := range ts {
		if labelled := tk.Label != ""; labelled != (tk.Value == 1e-3 || tk.Value == 1) {
			t.Errorf("tick %g label %q", tk.Value, tk.Label)
		}
	}
}
