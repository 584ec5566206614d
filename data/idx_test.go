package data

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// idxBytes builds a uint8 IDX file with the given dims and body.
func idxBytes(dims []int, body []byte) []byte {
	b := []byte{0, 0, 0x08, byte(len(dims))}
	for _, d := range dims {
		b = binary.BigEndian.AppendUint32(b, uint32(d))
	}
	return append(b, body...)
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one mentioning %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("error %q does not mention %q", err, p)
		}
	}
}

func mnistRoot(t *testing.T) string {
	t.Helper()
	dir, err := LocateMNIST()
	if err != nil && strings.Contains(err.Error(), "not on PATH") {
		t.Skipf("MNIST not available: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestMNISTReal(t *testing.T) {
	root := mnistRoot(t)
	cases := []struct {
		split  Split
		n      int
		labels []int
		sums   []int
		row14  []uint8 // row 14 of image 0, columns 13..19
	}{
		{Train, 60000, []int{5, 0, 4, 1, 9, 2, 1, 3, 1, 4}, []int{27525, 31095, 19443}, []uint8{81, 240, 253, 253, 119, 25, 0}},
		{Val, 10000, []int{7, 2, 1, 0, 4, 1, 4, 9, 5, 9}, []int{18454, 28850, 9871}, []uint8{0, 0, 0, 59, 249, 254, 62}},
	}
	for _, c := range cases {
		cfg := DefaultConfig() // root "" → located through the module cache
		ds, err := Open(cfg, c.split, 1)
		if err != nil {
			t.Fatal(err)
		}
		if ds.Len() != c.n || len(ds.Classes()) != 10 || ds.Channels() != 1 || ds.Name() != string(NameMNIST) {
			t.Fatalf("%v: len %d classes %d chans %d", c.split, ds.Len(), len(ds.Classes()), ds.Channels())
		}
		for i, want := range c.labels {
			img, l, err := ds.Item(i)
			if err != nil {
				t.Fatal(err)
			}
			if l != want {
				t.Errorf("%v item %d: label %d, want %d", c.split, i, l, want)
			}
			if img.C != 1 || img.H != 28 || img.W != 28 {
				t.Fatalf("shape %dx%dx%d", img.C, img.H, img.W)
			}
			if i < len(c.sums) {
				s := 0
				for _, v := range img.Pix {
					s += int(v)
				}
				if s != c.sums[i] {
					t.Errorf("%v item %d: pixel sum %d, want %d", c.split, i, s, c.sums[i])
				}
			}
		}
		img, _, _ := ds.Item(0)
		if got := img.Pix[14*28+13 : 14*28+20]; !bytes.Equal(got, c.row14) {
			t.Errorf("%v item 0 row 14: %v, want %v", c.split, got, c.row14)
		}
		m, s := ds.Norm()
		if m[0] != 0.1307 || s[0] != 0.3081 {
			t.Errorf("norm %v %v", m, s)
		}
	}
	// An explicit root wins; limits keep the first N; 3 channels replicate gray.
	cfg := DefaultConfig()
	cfg.Root, cfg.LimitTrain = root, 7
	ds, err := Open(cfg, Train, 3)
	if err != nil {
		t.Fatal(err)
	}
	img, l, _ := ds.Item(0)
	if ds.Len() != 7 || ds.Channels() != 3 || l != 5 || img.C != 3 {
		t.Fatalf("limited RGB MNIST: len %d chans %d label %d", ds.Len(), ds.Channels(), l)
	}
	if !bytes.Equal(img.Pix[:784], img.Pix[784:1568]) || !bytes.Equal(img.Pix[:784], img.Pix[1568:]) {
		t.Error("gray→RGB did not replicate the channel")
	}
	if m, _ := ds.Norm(); len(m) != 3 || m[2] != 0.1307 {
		t.Errorf("RGB MNIST norm %v", m)
	}
}

func TestFashionMNISTReal(t *testing.T) {
	if _, err := LocateFashionMNIST(); err != nil {
		t.Skipf("Fashion-MNIST not installed (apt-get install -y dataset-fashion-mnist): %v", err)
	}
	cfg := DefaultConfig()
	cfg.Name, cfg.LimitVal = NameFashionMNIST, 100
	ds, err := Open(cfg, Val, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []int{9, 2, 1, 1, 6, 1, 4, 6, 5, 7}
	for i, w := range want {
		_, l, _ := ds.Item(i)
		if l != w {
			t.Errorf("item %d: label %d, want %d", i, l, w)
		}
	}
	img, _, _ := ds.Item(1)
	s := 0
	for _, v := range img.Pix {
		s += int(v)
	}
	if ds.Len() != 100 || s != 100994 || ds.Classes()[9] != "Ankle boot" {
		t.Errorf("len %d, item 1 sum %d (want 100994), class 9 %q", ds.Len(), s, ds.Classes()[9])
	}
	if m, sd := ds.Norm(); m[0] != 0.2860 || sd[0] != 0.3530 {
		t.Errorf("norm %v %v", m, sd)
	}
}

// writeIDXSet writes a small MNIST-style set (n 4×5 images) to dir.
func writeIDXSet(t *testing.T, dir, prefix string, n int, compress bool) ([]byte, []byte) {
	pix := make([]byte, n*20)
	for i := range pix {
		pix[i] = byte(i * 7)
	}
	lbl := make([]byte, n)
	for i := range lbl {
		lbl[i] = byte(i % 10)
	}
	img, lab := idxBytes([]int{n, 4, 5}, pix), idxBytes([]int{n}, lbl)
	ext := ""
	if compress {
		img, lab, ext = gz(img), gz(lab), ".gz"
	}
	writeFile(t, filepath.Join(dir, prefix+"-images-idx3-ubyte"+ext), img)
	writeFile(t, filepath.Join(dir, prefix+"-labels-idx1-ubyte"+ext), lab)
	return pix, lbl
}

func TestIDXRawAndGzipAgree(t *testing.T) {
	for _, compress := range []bool{false, true} {
		dir := t.TempDir()
		pix, lbl := writeIDXSet(t, dir, "t10k", 12, compress)
		cfg := DefaultConfig()
		cfg.Root = dir
		ds, err := Open(cfg, Val, 1)
		if err != nil {
			t.Fatal(err)
		}
		if ds.Len() != 12 {
			t.Fatalf("len %d", ds.Len())
		}
		img, l, _ := ds.Item(3)
		if l != int(lbl[3]) || !bytes.Equal(img.Pix, pix[60:80]) || img.H != 4 || img.W != 5 {
			t.Fatalf("compress=%v: item 3 label %d pix %v", compress, l, img.Pix)
		}
	}
}

func TestIDXErrors(t *testing.T) {
	good := idxBytes([]int{2, 2, 2}, make([]byte, 8))
	cases := []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "too short"},
		{"bad magic", append([]byte{0, 1}, good[2:]...), "bad magic"},
		{"float type", append([]byte{0, 0, 0x0d}, good[3:]...), "data type 0x0d"},
		{"zero dims", []byte{0, 0, 8, 0}, "0 dimensions"},
		{"truncated header", good[:9], "truncated header"},
		{"truncated body", good[:len(good)-1], "truncated body"},
		{"trailing bytes", append(append([]byte{}, good...), 1), "trailing"},
		{"huge dims", idxBytes([]int{1 << 30, 1 << 30, 1 << 30}, make([]byte, 16)), "truncated body"},
		{"gzip truncated body", gz(good)[:len(gz(good))-12], "idx"},
		{"gzip short body", gz(good[:len(good)-3]), "truncated body"},
		{"gzip trailing", gz(append(append([]byte{}, good...), 9, 9)), "trailing"},
		{"gzip bad magic", gz(append([]byte{1, 0}, good[2:]...)), "bad magic"},
	}
	for _, c := range cases {
		_, err := DecodeIDX("f.idx", c.b)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "f.idx") {
			t.Errorf("%s: error %q should name f.idx and say %q", c.name, err, c.want)
		}
	}
	if x, err := DecodeIDX("ok", gz(good)); err != nil || len(x.Data) != 8 {
		t.Fatalf("good gzip file: %v", err)
	}
}

// A header declaring gigabytes over a tiny body must fail without allocating them.
func TestIDXNoAllocationBeyondInput(t *testing.T) {
	for _, b := range [][]byte{
		idxBytes([]int{1 << 30, 1 << 20}, make([]byte, 64)),
		gz(idxBytes([]int{1 << 30, 1 << 20}, make([]byte, 64))),
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, err := DecodeIDX("big", b); err == nil {
			t.Fatal("no error for a lying header")
		}
		runtime.ReadMemStats(&after)
		if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
			t.Errorf("allocated %d bytes for a %d-byte input", d, len(b))
		}
	}
}

func TestMNISTFileErrors(t *testing.T) {
	cfg := DefaultConfig()
	// Missing directory.
	cfg.Root = filepath.Join(t.TempDir(), "nope")
	_, err := Open(cfg, Train, 1)
	wantErr(t, err, cfg.Root, "IDX files")

	// Missing labels file.
	dir := t.TempDir()
	writeIDXSet(t, dir, "train", 4, true)
	os.Remove(filepath.Join(dir, "train-labels-idx1-ubyte.gz"))
	cfg.Root = dir
	_, err = Open(cfg, Train, 1)
	wantErr(t, err, "train-labels-idx1-ubyte", dir)

	// Count mismatch.
	dir = t.TempDir()
	writeIDXSet(t, dir, "train", 4, false)
	writeFile(t, filepath.Join(dir, "train-labels-idx1-ubyte"), idxBytes([]int{3}, []byte{1, 2, 3}))
	cfg.Root = dir
	_, err = Open(cfg, Train, 1)
	wantErr(t, err, "4 images", "3 labels", "train-labels-idx1-ubyte")

	// Wrong dimensions: labels file with 2 dims.
	writeFile(t, filepath.Join(dir, "train-labels-idx1-ubyte"), idxBytes([]int{4, 1}, []byte{1, 2, 3, 4}))
	_, err = Open(cfg, Train, 1)
	wantErr(t, err, "train-labels-idx1-ubyte", "want 1 dimension")

	// Images with 2 dims.
	writeFile(t, filepath.Join(dir, "train-images-idx3-ubyte"), idxBytes([]int{4, 20}, make([]byte, 80)))
	_, err = Open(cfg, Train, 1)
	wantErr(t, err, "train-images-idx3-ubyte", "want 3 dimensions")

	// Label out of range.
	dir = t.TempDir()
	writeIDXSet(t, dir, "train", 4, false)
	writeFile(t, filepath.Join(dir, "train-labels-idx1-ubyte"), idxBytes([]int{4}, []byte{1, 2, 10, 4}))
	cfg.Root = dir
	_, err = Open(cfg, Train, 1)
	wantErr(t, err, "train-labels-idx1-ubyte", "label 10", "item 2")

	// Truncated image body names the file.
	dir = t.TempDir()
	writeIDXSet(t, dir, "train", 4, false)
	p := filepath.Join(dir, "train-images-idx3-ubyte")
	b, _ := os.ReadFile(p)
	writeFile(t, p, b[:len(b)-5])
	cfg.Root = dir
	_, err = Open(cfg, Train, 1)
	wantErr(t, err, p, "truncated")
}
