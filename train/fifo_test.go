package train

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/vitgo/vit/internal/regfile"
)

// TestLoadConfigFIFO: -config naming a named pipe is refused by its type
// instead of blocking in open until a writer comes.
func TestLoadConfigFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "run.yaml")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	var nr *regfile.NotRegularError
	if _, err := LoadConfig(p, nil); !errors.As(err, &nr) || nr.Path != p {
		t.Fatalf("LoadConfig(FIFO) = %v, want a *regfile.NotRegularError naming it", err)
	}
}
