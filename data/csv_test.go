package data

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vitgo/vit/internal/synthimg"
)

// csvConfig writes a small folder (2 classes of 3 training and 2
// validation images) with its CSV files and returns the csv config.
func csvConfig(t *testing.T) (Config, string) {
	t.Helper()
	root := t.TempDir()
	train, val, err := synthimg.WriteSmallCSV(root, 2, 3, 2, 8)
	if err != nil {
		t.Fatal(err)
	}
	c := DefaultConfig()
	c.Name, c.TrainCSV, c.ValCSV, c.Workers = NameCSV, train, val, 2
	return c, root
}

// TestCSVMatchesFolder: the CSV files listing a folder's images give the
// folder's images, labels and classes, in the CSV's order.
func TestCSVMatchesFolder(t *testing.T) {
	c, root := csvConfig(t)
	fc := DefaultConfig()
	fc.Name, fc.Root, fc.Workers = NameFolder, root, 2
	for _, split := range []Split{Train, Val} {
		cs, err := Open(c, split, 1)
		if err != nil {
			t.Fatal(err)
		}
		fs, err := Open(fc, split, 1)
		if err != nil {
			t.Fatal(err)
		}
		if cs.Name() != "csv" || cs.Len() != fs.Len() || strings.Join(cs.Classes(), ",") != strings.Join(fs.Classes(), ",") {
			t.Fatalf("%v: csv %s %d %v, folder %d %v", split, cs.Name(), cs.Len(), cs.Classes(), fs.Len(), fs.Classes())
		}
		for i := range cs.Len() {
			a, la, err := cs.Item(i)
			if err != nil {
				t.Fatal(err)
			}
			b, lb, err := fs.Item(i)
			if err != nil {
				t.Fatal(err)
			}
			if la != lb || string(a.Pix) != string(b.Pix) {
				t.Errorf("%v item %d: csv label %d, folder %d (pixels equal: %v)", split, i, la, lb, string(a.Pix) == string(b.Pix))
			}
		}
	}
}

// TestCSVClassesSortedQuotedAnyOrder: classes are the training labels
// sorted; columns may come in any order beside others, fields may be
// quoted (a comma in a file name), a UTF-8 BOM is ignored, and a row's
// path is relative to the CSV's folder or absolute.
func TestCSVClassesSortedQuotedAnyOrder(t *testing.T) {
	c, root := csvConfig(t)
	src := filepath.Join(root, "train", "c0", "a000.png")
	odd := filepath.Join(root, "odd, name.png")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(odd, b, 0o644); err != nil {
		t.Fatal(err)
	}
	list := "\ufeffnote,label,path\n" +
		"x,zebra,\"odd, name.png\"\n" +
		"y,ant,train/c0/a001.png\n" +
		"z,ant," + filepath.Join(root, "train", "c1", "a000.png") + "\n"
	c.TrainCSV = filepath.Join(root, "sub.csv")
	if err := os.WriteFile(c.TrainCSV, []byte(list), 0o644); err != nil {
		t.Fatal(err)
	}
	ds, err := Open(c, Train, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ds.Classes(), ","); got != "ant,zebra" {
		t.Errorf("classes %s, want ant,zebra", got)
	}
	want := []int{1, 0, 0}
	for i, w := range want {
		if _, l, err := ds.Item(i); err != nil || l != w {
			t.Errorf("item %d: label %d (%v), want %d", i, l, err, w)
		}
	}
}

// TestCSVRefusals: each bad CSV is a *CSVError naming the file and line.
func TestCSVRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, train, val string
		file             string // "train" or "val": the file named
		line             int
		msg              string
	}{
		{name: "empty", train: "", file: "train", line: 1, msg: "empty"},
		{name: "no label column", train: "path,class\ntrain/c0/a000.png,c0\n", file: "train", line: 1, msg: "lacks the column"},
		{name: "header twice", train: "path,label,path\ntrain/c0/a000.png,c0,x\n", file: "train", line: 1, msg: "twice"},
		{name: "header only", train: "path,label\n", file: "train", line: 0, msg: "no images"},
		{name: "empty label", train: "path,label\ntrain/c0/a000.png,c0\ntrain/c0/a001.png, \n", file: "train", line: 3, msg: "empty label"},
		{name: "empty path", train: "path,label\n,c0\n", file: "train", line: 2, msg: "empty path"},
		{name: "missing field", train: "path,label\ntrain/c0/a000.png,c0\ntrain/c0/a001.png\n", file: "train", line: 3, msg: "malformed"},
		{name: "bad quote", train: "path,label\n\"train/c0/a000.png,c0\n", file: "train", line: 2, msg: "malformed"},
		{name: "missing image", train: "path,label\ntrain/c0/a000.png,c0\ntrain/c0/nope.png,c0\n", file: "train", line: 3, msg: "nope.png"},
		{name: "a directory", train: "path,label\ntrain/c0,c0\n", file: "train", line: 2, msg: "directory"},
		{name: "not an image", train: "path,label\ntrain.csv,c0\n", file: "train", line: 2, msg: "not an image"},
		{name: "duplicate row", train: "path,label\ntrain/c0/a000.png,c0\ntrain/c1/a000.png,c1\n./train/c0/a000.png,c1\n", file: "train", line: 4, msg: "first on line 2"},
		{name: "unknown val label", val: "path,label\nval/c0/a000.png,c7\n", file: "val", line: 2, msg: "no class"},
		{name: "shared image", val: "path,label\nval/c0/a000.png,c0\ntrain/c1/a001.png,c1\n", file: "val", line: 3, msg: "also listed"},
		{name: "duplicate class", train: "path,label\ntrain/c0/a000.png,cat\ntrain/c1/a000.png,Cat\n", file: "", msg: "twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, root := csvConfig(t)
			split := Train
			if tc.train != "" || tc.name == "empty" {
				c.TrainCSV = filepath.Join(root, "t.csv")
				if err := os.WriteFile(c.TrainCSV, []byte(tc.train), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tc.val != "" {
				split = Val
				c.ValCSV = filepath.Join(root, "v.csv")
				if err := os.WriteFile(c.ValCSV, []byte(tc.val), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Open(c, split, 1)
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q does not say %q", err, tc.msg)
			}
			if tc.file == "" {
				var dup *DuplicateClassError
				if !errors.As(err, &dup) || dup.File != c.TrainCSV {
					t.Errorf("error %v is not a *DuplicateClassError naming %s", err, c.TrainCSV)
				}
				return
			}
			var ce *CSVError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is not a *CSVError", err)
			}
			want := c.TrainCSV
			if tc.file == "val" {
				want = c.ValCSV
			}
			if ce.File != want || ce.Line != tc.line {
				t.Errorf("error names %s:%d, want %s:%d", ce.File, ce.Line, want, tc.line)
			}
		})
	}
}

// TestCSVSharesFolderChecks: the folder reader's header limits and
// data.skip_corrupt apply to a csv data set's images, and a class left
// without images is refused.
func TestCSVSharesFolderChecks(t *testing.T) {
	c, root := csvConfig(t)
	big, err := synthimg.FlatPNG(2000, 2000)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "train", "c1", "big.png"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	list := "path,label\ntrain/c0/a000.png,c0\ntrain/c1/big.png,c1\ntrain/c1/a000.png,c1\n"
	if err := os.WriteFile(c.TrainCSV, []byte(list), 0o644); err != nil {
		t.Fatal(err)
	}
	c.MaxPixels = 1_000_000
	var tooMany *ImageTooLargeError
	if _, err := Open(c, Train, 1); !errors.As(err, &tooMany) {
		t.Fatalf("over max_pixels: %v, want a *ImageTooLargeError", err)
	}
	c.SkipCorrupt = true
	// A class whose every row is skipped is refused, not dropped.
	list = "path,label\ntrain/c0/a000.png,c0\ntrain.csv,c1\n"
	if err := os.WriteFile(c.TrainCSV, []byte(list), 0o644); err != nil {
		t.Fatal(err)
	}
	var ce *CSVError
	if _, err := Open(c, Train, 1); !errors.As(err, &ce) || !strings.Contains(err.Error(), `class "c1"`) {
		t.Errorf("a class of skipped rows: %v, want a *CSVError naming it", err)
	}
	list = "path,label\ntrain/c0/a000.png,c0\ntrain/c1/big.png,c1\ntrain/c1/a000.png,c1\n"
	if err := os.WriteFile(c.TrainCSV, []byte(list), 0o644); err != nil {
		t.Fatal(err)
	}
	ds, err := Open(c, Train, 1)
	if err != nil {
		t.Fatal(err)
	}
	if ds.Len() != 2 || ds.(*Folder).Skipped() != 1 {
		t.Errorf("skip_corrupt: %d images, %d skipped; want 2, 1", ds.Len(), ds.(*Folder).Skipped())
	}
}

// TestCSVConfig: csv needs both files, and the files are refused with any
// other data set.
func TestCSVConfig(t *testing.T) {
	for _, tc := range []struct {
		c   Config
		key string
	}{
		{Config{Name: NameCSV, ValCSV: "v.csv"}, "data.train_csv"},
		{Config{Name: NameCSV, TrainCSV: "t.csv"}, "data.val_csv"},
		{Config{Name: NameFolder, Root: "r", TrainCSV: "t.csv"}, "data.train_csv"},
		{Config{Name: NameMNIST, ValCSV: "v.csv"}, "data.val_csv"},
	} {
		err := tc.c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("%+v: %v, want an error naming %s", tc.c, err, tc.key)
		}
	}
	if err := (Config{Name: NameCSV, TrainCSV: "t.csv", ValCSV: "v.csv"}).Validate(); err != nil {
		t.Errorf("a csv config: %v", err)
	}
}

// TestCSVDigest: the rank data digest covers the listed files' names,
// sizes and labels.
func TestCSVDigest(t *testing.T) {
	c, root := csvConfig(t)
	digest := func() [32]byte {
		t.Helper()
		ds, err := Open(c, Train, 1)
		if err != nil {
			t.Fatal(err)
		}
		d, err := Digest(ds)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	base := digest()
	rows, err := os.ReadFile(c.TrainCSV)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func()
	}{
		{"a label", func() {
			os.WriteFile(c.TrainCSV, []byte(strings.Replace(string(rows), "a002.png,c1", "a002.png,c0", 1)), 0o644)
		}},
		{"a file name", func() {
			os.Rename(filepath.Join(root, "train/c1/a002.png"), filepath.Join(root, "train/c1/b002.png"))
			os.WriteFile(c.TrainCSV, []byte(strings.Replace(string(rows), "c1/a002.png", "c1/b002.png", 1)), 0o644)
		}},
		{"a file's size", func() {
			f, _ := os.OpenFile(filepath.Join(root, "train/c1/b002.png"), os.O_APPEND|os.O_WRONLY, 0)
			f.Write([]byte{0})
			f.Close()
		}},
	} {
		tc.edit()
		if d := digest(); d == base {
			t.Errorf("changing %s keeps the digest", tc.name)
		} else {
			base = d
		}
	}
}
