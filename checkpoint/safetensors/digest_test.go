package safetensors

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/vitgo/vit/internal/regfile"
)

// TestReadFileSHA256: the digest is the SHA-256 of the file's bytes, the
// ones the tensors were parsed from, for files of several layouts (a
// one-byte data section, where the decoder's probe of the last byte is the
// first data byte, included); a FIFO is refused, not waited on.
func TestReadFileSHA256(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		file []byte
	}{
		{"golden", nil},
		{"no tensors", rawFile(`{"__metadata__":{"a":"b"}}`, nil)},
		{"one byte", rawFile(`{"x":{"dtype":"I8","shape":[1],"data_offsets":[0,1]}}`, []byte{7})},
		{"two tensors", rawFile(`{"a":{"dtype":"I8","shape":[2],"data_offsets":[0,2]},"b":{"dtype":"I16","shape":[1],"data_offsets":[2,4]}}`, []byte{1, 2, 3, 4})},
	} {
		p := filepath.Join(dir, tc.name+".safetensors")
		if tc.file == nil {
			p = "testdata/golden.safetensors"
		} else if err := os.WriteFile(p, tc.file, 0o600); err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		want := sha256.Sum256(raw)
		f, sum, err := ReadFileSHA256(p)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if sum != hex.EncodeToString(want[:]) {
			t.Errorf("%s: digest %s, want %x", tc.name, sum, want)
		}
		plain, err := ReadFile(p)
		if err != nil || len(plain.Tensors) != len(f.Tensors) {
			t.Errorf("%s: ReadFileSHA256 parsed %d tensors, ReadFile %d (%v)", tc.name, len(f.Tensors), len(plain.Tensors), err)
		}
	}
	fifo := filepath.Join(dir, "teacher.safetensors")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	var nr *regfile.NotRegularError
	if _, _, err := ReadFileSHA256(fifo); !errors.As(err, &nr) || nr.Mode&fs.ModeNamedPipe == 0 {
		t.Errorf("ReadFileSHA256(FIFO) = %v, want a *regfile.NotRegularError", err)
	}
}
