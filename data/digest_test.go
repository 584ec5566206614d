package data

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"
)

// TestDigest: a data set's digest changes with every pixel, label, class
// name and normalization of an in-memory set, and with a folder's file
// names, sizes, labels and classes; it does not change with where the files
// are, or with whether IDX files are gzipped.
func TestDigest(t *testing.T) {
	mem := func(edit func(pix []uint8, labels []int, classes []string)) Dataset {
		pix, labels, classes := []uint8{1, 2, 3, 4, 5, 6, 7, 8}, []int{0, 1}, []string{"a", "b"}
		if edit != nil {
			edit(pix, labels, classes)
		}
		m, err := NewInMemory("mnist", classes, 1, 2, 2, pix, labels)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	base := mem(nil)
	for _, tc := range []struct {
		name string
		ds   Dataset
		same bool
	}{
		{"same", mem(nil), true},
		{"one pixel", mem(func(p []uint8, _ []int, _ []string) { p[7]++ }), false},
		{"one label", mem(func(_ []uint8, l []int, _ []string) { l[0] = 1 }), false},
		{"classes renamed", mem(func(_ []uint8, _ []int, c []string) { c[1] = "c" }), false},
		{"classes swapped", mem(func(_ []uint8, _ []int, c []string) { c[0], c[1] = c[1], c[0] }), false},
		{"normalization", mem(nil).(*InMemory).withChannels(1, []float64{0.5}, []float64{0.25}), false},
	} {
		a, err := Digest(base)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Digest(tc.ds)
		if err != nil {
			t.Fatal(err)
		}
		if (a == b) != tc.same {
			t.Errorf("%s: digests equal %t, want %t", tc.name, a == b, tc.same)
		}
	}
}

// TestDigestIDXGzipped: MNIST read from gzipped and from raw IDX files has
// one digest.
func TestDigestIDXGzipped(t *testing.T) {
	root, err := LocateMNIST()
	if err != nil {
		t.Skip(err)
	}
	raw := t.TempDir()
	for _, name := range []string{"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"} {
		b, err := os.ReadFile(filepath.Join(root, name+".gz"))
		if err != nil {
			t.Skip(err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if _, err := out.ReadFrom(zr); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(raw, name), out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var sums [2][32]byte
	for i, r := range []string{root, raw} {
		ds, err := Open(Config{Name: NameMNIST, Root: r, LimitVal: 100}, Val, 1)
		if err != nil {
			t.Fatal(err)
		}
		if sums[i], err = Digest(ds); err != nil {
			t.Fatal(err)
		}
	}
	if sums[0] != sums[1] {
		t.Error("gzipped and raw MNIST have other digests")
	}
}
