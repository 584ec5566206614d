package data

import (
	"fmt"
	"image/jpeg"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/vitgo/vit/internal/synthimg"
)

// TestFolderLoaderRecyclesPixels runs a folder loader with several workers
// for two epochs: every image is handed back to the pixel pool once
// transformed, and every batch row still equals the transform of a freshly
// decoded image (a buffer reused too early would show here).
func TestFolderLoaderRecyclesPixels(t *testing.T) {
	root := t.TempDir()
	for _, split := range []string{"train", "val"} {
		for c := 0; c < 2; c++ {
			dir := filepath.Join(root, split, fmt.Sprint("c", c))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 12; i++ {
				w, h := 60, 45
				if i%2 == 1 {
					w, h = 45, 60
				}
				f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%02d.jpg", i)))
				if err != nil {
					t.Fatal(err)
				}
				if err := jpeg.Encode(f, synthimg.Photo(w, h, uint64(100*c+i)), &jpeg.Options{Quality: 90}); err != nil {
					t.Fatal(err)
				}
				f.Close()
			}
		}
	}
	ds, err := Open(Config{Name: NameFolder, Root: root}, Train, 3)
	if err != nil {
		t.Fatal(err)
	}
	aug := AugmentConfig{HFlip: 0.5, RandAugment: "rand-m9-mstd0.5-inc1", REProb: 0.25, Interpolation: InterpBilinearAA}
	cfg := LoaderConfig{BatchSize: 4, ImgH: 32, ImgW: 32, Train: true, Seed: 3, Workers: 4, Prefetch: 2,
		Augment: aug, Mixup: DefaultMixupConfig(), NumClasses: 2}
	l, err := NewLoader(ds, cfg)
	if err != nil {
		t.Fatal(err)
	}
	mean, std := ds.Norm()
	pipe, err := NewPipeline(3, 32, 32, true, 3, aug, mean, std)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]float32, 3*32*32)
	for epoch := 0; epoch < 2; epoch++ {
		it := l.Epoch(epoch, 0)
		for {
			b, ok, err := it.Next()
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
			for i, idx := range b.Indices {
				img, _, err := ds.Item(idx)
				if err != nil {
					t.Fatal(err)
				}
				if err := pipe.Apply(want, img, epoch, b.Step*4+b.Rows[i]); err != nil {
					t.Fatal(err)
				}
				for k, v := range b.X[i*len(want) : (i+1)*len(want)] {
					if math.Float32bits(v) != math.Float32bits(want[k]) {
						t.Fatalf("epoch %d step %d row %d: value %d = %v, want %v", epoch, b.Step, i, k, v, want[k])
					}
				}
			}
		}
		it.Close()
	}
	if got := ds.(*Folder).released.Load(); got != 2*24 {
		t.Fatalf("%d images handed back to the pixel pool, want %d", got, 2*24)
	}
}
