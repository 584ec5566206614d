package data

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// cifarRecords builds n CIFAR-10 records; image i has pixel value (i+ch*7+p)%256
// at channel ch, position p, and label i%10.
func cifarRecords(n, first int) []byte {
	var b []byte
	for i := first; i < first+n; i++ {
		b = append(b, byte(i%10))
		for ch := 0; ch < 3; ch++ {
			for p := 0; p < 1024; p++ {
				b = append(b, byte(i+ch*7+p))
			}
		}
	}
	return b
}

func writeCIFAR(t *testing.T, dir string, perBatch int, meta string) {
	for k := 1; k <= 5; k++ {
		writeFile(t, filepath.Join(dir, fmt.Sprintf("data_batch_%d.bin", k)), cifarRecords(perBatch, (k-1)*perBatch))
	}
	writeFile(t, filepath.Join(dir, "test_batch.bin"), cifarRecords(3, 1000))
	if meta != "" {
		writeFile(t, filepath.Join(dir, "batches.meta.txt"), []byte(meta))
	}
}

func TestCIFAR10Generated(t *testing.T) {
	dir := t.TempDir()
	names := "a0\na1\na2\na3\na4\na5\na6\na7\na8\na9\n\n"
	writeCIFAR(t, dir, 4, names)
	cfg := DefaultConfig()
	cfg.Name, cfg.Root = NameCIFAR10, dir
	ds, err := Open(cfg, Train, 3)
	if err != nil {
		t.Fatal(err)
	}
	if ds.Len() != 20 || ds.Channels() != 3 || ds.Classes()[3] != "a3" || len(ds.Classes()) != 10 {
		t.Fatalf("len %d chans %d classes %v", ds.Len(), ds.Channels(), ds.Classes())
	}
	for _, i := range []int{0, 5, 19} {
		img, l, err := ds.Item(i)
		if err != nil {
			t.Fatal(err)
		}
		if l != i%10 || img.C != 3 || img.H != 32 || img.W != 32 {
			t.Fatalf("item %d: label %d shape %dx%dx%d", i, l, img.C, img.H, img.W)
		}
		// CHW: channel 1, row 2, column 3 is position 1024 + 2*32 + 3.
		if got, want := img.Pix[1024+2*32+3], byte(i+7+2*32+3); got != want {
			t.Fatalf("item %d: pixel (1,2,3) = %d, want %d", i, got, want)
		}
	}
	if m, s := ds.Norm(); m[0] != 0.4914 || s[2] != 0.2616 {
		t.Errorf("norm %v %v", m, s)
	}

	// Val split, grayscale, limit, standard names without a meta file.
	os.Remove(filepath.Join(dir, "batches.meta.txt"))
	cfg.LimitVal = 2
	val, err := Open(cfg, Val, 1)
	if err != nil {
		t.Fatal(err)
	}
	img, l, _ := val.Item(1)
	if val.Len() != 2 || l != 1001%10 || img.C != 1 || val.Classes()[0] != "airplane" {
		t.Fatalf("val: len %d label %d chans %d classes %v", val.Len(), l, img.C, val.Classes())
	}
	r, g, b := byte(1001%256), byte((1001+7)%256), byte((1001+14)%256)
	if img.Pix[0] != lumaU8(r, g, b) {
		t.Errorf("gray pixel %d, want luma %d", img.Pix[0], lumaU8(r, g, b))
	}

	// The directory the official archive unpacks to is found under root.
	parent := t.TempDir()
	writeCIFAR(t, filepath.Join(parent, "cifar-10-batches-bin"), 1, "")
	cfg.Root = parent
	if ds, err := Open(cfg, Train, 3); err != nil || ds.Len() != 5 {
		t.Fatalf("cifar-10-batches-bin subdir: %v", err)
	}
}

func TestCIFAR10Errors(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Name = NameCIFAR10

	cfg.Root = filepath.Join(t.TempDir(), "missing")
	_, err := Open(cfg, Train, 3)
	wantErr(t, err, cfg.Root, "CIFAR-10")

	dir := t.TempDir()
	writeCIFAR(t, dir, 2, "")
	os.Remove(filepath.Join(dir, "data_batch_4.bin"))
	cfg.Root = dir
	_, err = Open(cfg, Train, 3)
	wantErr(t, err, "data_batch_4.bin")

	writeFile(t, filepath.Join(dir, "test_batch.bin"), cifarRecords(2, 0)[:3073*2-1])
	_, err = Open(cfg, Val, 3)
	wantErr(t, err, "test_batch.bin", "multiple of the 3073-byte record")

	bad := cifarRecords(2, 0)
	bad[3073] = 10
	writeFile(t, filepath.Join(dir, "test_batch.bin"), bad)
	_, err = Open(cfg, Val, 3)
	wantErr(t, err, "test_batch.bin", "record 1", "label 10")

	writeFile(t, filepath.Join(dir, "test_batch.bin"), cifarRecords(2, 0))
	writeFile(t, filepath.Join(dir, "batches.meta.txt"), []byte("a\nb\n"))
	_, err = Open(cfg, Val, 3)
	wantErr(t, err, "batches.meta.txt", "2 classes")

	if _, _, err := DecodeCIFAR("x.bin", nil, 10); err == nil {
		t.Error("empty file accepted")
	}
	pix, labels, err := DecodeCIFAR("x.bin", cifarRecords(3, 4), 10)
	if err != nil || len(labels) != 3 || labels[2] != 6 || !bytes.Equal(pix[3072:3074], []byte{5, 6}) {
		t.Fatalf("DecodeCIFAR: %v %v", labels, err)
	}
}
