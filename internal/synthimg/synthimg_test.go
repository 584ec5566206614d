package synthimg_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/internal/synthimg"
)

// TestWriteFolder checks that the folder opens as a data set of the sizes
// asked for, and that its JPEGs carry a photograph's entropy (a flat image
// of this size is a few KB).
func TestWriteFolder(t *testing.T) {
	root := t.TempDir()
	if err := synthimg.WriteFolder(root, 2, 3, 1); err != nil {
		t.Fatal(err)
	}
	ds, err := data.Open(data.Config{Name: data.NameFolder, Root: root}, data.Train, 3)
	if err != nil {
		t.Fatal(err)
	}
	if ds.Len() != 6 || len(ds.Classes()) != 2 {
		t.Fatalf("%d images in %d classes, want 6 in 2", ds.Len(), len(ds.Classes()))
	}
	sizes := map[[2]int]int{}
	for i := 0; i < ds.Len(); i++ {
		img, _, err := ds.Item(i)
		if err != nil {
			t.Fatal(err)
		}
		sizes[[2]int{img.W, img.H}]++
	}
	if sizes[[2]int{500, 375}] == 0 || sizes[[2]int{375, 500}] == 0 {
		t.Fatalf("sizes %v, want both 500×375 and 375×500", sizes)
	}
	st, err := os.Stat(filepath.Join(root, "train", "class000", "img00000.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() < 40_000 || st.Size() > 200_000 {
		t.Fatalf("a 500×375 JPEG of %d bytes, want 40–200 KB (photo-like)", st.Size())
	}
}
