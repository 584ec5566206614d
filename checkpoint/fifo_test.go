package checkpoint_test

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/vitgo/vit/checkpoint"
	"github.com/vitgo/vit/internal/regfile"
)

// TestReadModelFIFO: a model path that is a named pipe (eval -checkpoint,
// finetune.init_from, the server's -checkpoint) is refused by its type at
// once; it used to block in open until a writer came.
func TestReadModelFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "init.safetensors")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	var nr *regfile.NotRegularError
	if _, _, _, err := checkpoint.ReadModel(p); !errors.As(err, &nr) || nr.Path != p {
		t.Fatalf("ReadModel(FIFO) = %v, want a *regfile.NotRegularError naming it", err)
	}
}
