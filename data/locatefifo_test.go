package data

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/vitgo/vit/internal/regfile"
)

// TestDataFileFIFO: each data file the locators look for (the MNIST and
// Fashion-MNIST IDX files in every spelling, CIFAR-10's batches and class
// list), made a named pipe, is refused by its type: the error is a
// *regfile.NotRegularError naming that path as a named pipe, not "no …
// file"; a regular file in another accepted spelling is still used.
func TestDataFileFIFO(t *testing.T) {
	for _, tc := range []struct {
		name    DatasetName
		regular []string // files written first
		fifo    string
	}{
		{NameMNIST, []string{"train-images-idx3-ubyte.gz"}, "train-labels-idx1-ubyte.gz"},
		{NameMNIST, []string{"train-images-idx3-ubyte"}, "train-labels-idx1-ubyte"},
		{NameMNIST, nil, "train-images-idx3-ubyte.gz"},
		{NameMNIST, []string{"train-images-idx3-ubyte"}, "train-labels.idx1-ubyte"},
		{NameFashionMNIST, []string{"train-images-idx3-ubyte.gz"}, "train-labels-idx1-ubyte.gz"},
		{NameCIFAR10, nil, "data_batch_1.bin"},
		{NameCIFAR10, []string{"data_batch_1.bin"}, "batches.meta.txt"},
	} {
		root := t.TempDir()
		for _, f := range tc.regular {
			if err := os.WriteFile(filepath.Join(root, f), []byte{0}, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		p := filepath.Join(root, tc.fifo)
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		cfg := DefaultConfig()
		cfg.Name, cfg.Root = tc.name, root
		_, err := Open(cfg, Train, 1)
		var nr *regfile.NotRegularError
		if !errors.As(err, &nr) || nr.Path != p || nr.Mode&fs.ModeNamedPipe == 0 || !strings.Contains(err.Error(), "named pipe") {
			t.Errorf("%s with %s a FIFO: %v, want a *regfile.NotRegularError naming it a named pipe", tc.name, tc.fifo, err)
		}
	}
	// A FIFO in one spelling does not hide a regular file in another.
	root := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(root, "train-labels-idx1-ubyte.gz"), 0o600); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(root, "train-labels-idx1-ubyte")
	if err := os.WriteFile(want, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := findIDXFile(NameMNIST, root, "train", "labels", 1); err != nil || got != want {
		t.Errorf("findIDXFile = %q, %v; want %s", got, err, want)
	}
}
