package data

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pngClaiming returns a small valid PNG whose IHDR is rewritten to claim
// w×h pixels: its header decodes, its pixels would not. This is the
// decompression bomb's first step without the gigabytes.
func pngClaiming(t *testing.T, w, h uint32) []byte {
	t.Helper()
	b := bytes.Clone(encodeImage(t, "png-gray", 0, 6, 5))
	// 8-byte signature, then the IHDR chunk: length, "IHDR", width, height, …, CRC.
	if string(b[12:16]) != "IHDR" {
		t.Fatal("no IHDR")
	}
	binary.BigEndian.PutUint32(b[16:], w)
	binary.BigEndian.PutUint32(b[20:], h)
	n := binary.BigEndian.Uint32(b[8:])
	binary.BigEndian.PutUint32(b[16+n:], crc32.ChecksumIEEE(b[12:16+n]))
	return b
}

// TestPixelLimit: an image above data.max_pixels is refused from its header,
// before decoding, naming the file; with skip_corrupt it is skipped and
// counted. The default limit (50 MP) refuses a 20000×20000 PNG.
func TestPixelLimit(t *testing.T) {
	root := writeFolder(t)
	bomb := filepath.Join(root, "train", "cat", "bomb.png")
	writeFile(t, bomb, pngClaiming(t, 20000, 20000))
	cfg := DefaultConfig()
	cfg.Name, cfg.Root = NameFolder, root
	_, err := Open(cfg, Train, 3)
	var big *ImageTooLargeError
	if !errors.As(err, &big) || big.Path != bomb || big.Limit != DefaultMaxPixels || !strings.Contains(err.Error(), "data.max_pixels") {
		t.Fatalf("20000×20000 PNG: %v, want *ImageTooLargeError naming %s", err, bomb)
	}
	// Decoding checks it too (a file may change after Open).
	if _, err := decodeImageFile(bomb, 3, 0); !errors.As(err, &big) {
		t.Fatalf("decodeImageFile: %v", err)
	}
	cfg.SkipCorrupt = true
	log := &recLogger{}
	ds, err := Open(cfg, Train, 3, WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	if ds.Len() != 6 || ds.(*Folder).Skipped() != 1 || !strings.Contains(strings.Join(log.msgs, "\n"), "bomb.png") {
		t.Fatalf("skip: len %d skipped %d log %v", ds.Len(), ds.(*Folder).Skipped(), log.msgs)
	}
	// The key sets the limit: the fixture's images are 6..8 × 5 pixels.
	cfg.SkipCorrupt = false
	os.Remove(bomb)
	cfg.MaxPixels = 35
	if _, err := Open(cfg, Train, 3); !errors.As(err, &big) || big.Width != 8 || big.Limit != 35 {
		t.Fatalf("max_pixels 35: %v, want the 8×5 images refused", err)
	}
	cfg.MaxPixels = 40
	if _, err := Open(cfg, Train, 3); err != nil {
		t.Fatalf("max_pixels 40: %v", err)
	}
	for _, bad := range []int{-1, MaxMaxPixels + 1} {
		cfg.MaxPixels = bad
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "data.max_pixels") {
			t.Errorf("max_pixels %d: %v", bad, err)
		}
	}
}

// TestSymlinkedClassFolders: a class folder that is a symbolic link to a
// directory is followed (it was "not a directory"), as is a linked
// subfolder; a link loop is skipped with a warning instead of recursing.
func TestSymlinkedClassFolders(t *testing.T) {
	root := writeFolder(t)
	elsewhere := t.TempDir()
	for _, n := range []string{"p.png", "sub/q.png"} {
		writeFile(t, filepath.Join(elsewhere, "dogs", n), encodeImage(t, "png-rgba", 0, 6, 5))
	}
	if err := os.Symlink(filepath.Join(elsewhere, "dogs"), filepath.Join(root, "train", "dog")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..", filepath.Join(elsewhere, "dogs", "sub", "loop")); err != nil { // dogs/sub/loop → dogs
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(elsewhere, "dogs", "sub"), filepath.Join(root, "train", "bee", "more")); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Name, cfg.Root = NameFolder, root
	log := &recLogger{}
	ds, err := Open(cfg, Train, 3, WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	f := ds.(*Folder)
	if got := strings.Join(f.Classes(), ","); got != "ant,bee,cat,dog" {
		t.Fatalf("classes %s", got)
	}
	var dog, bee []string
	for i := range f.files {
		rel, _ := filepath.Rel(root, f.Path(i))
		switch f.labels[i] {
		case 1:
			bee = append(bee, rel)
		case 3:
			dog = append(dog, rel)
		}
	}
	// dogs/sub/loop/… leads back to dogs: listed once. bee/more leads into
	// the dog class: skipped, so no dog image is also labelled bee.
	if got := strings.Join(dog, " "); got != "train/dog/p.png train/dog/sub/q.png" {
		t.Errorf("dog files: %s", got)
	}
	if got := strings.Join(bee, " "); got != "train/bee/x.png train/bee/y.jpeg" {
		t.Errorf("bee files: %s", got)
	}
	msgs := strings.Join(log.msgs, "\n")
	if !strings.Contains(msgs, "loop") || !strings.Contains(msgs, filepath.Join(root, "train", "bee", "more")) {
		t.Errorf("no warning about the loop or the skipped link bee/more: %v", log.msgs)
	}
	if _, _, err := ds.Item(len(f.files) - 1); err != nil {
		t.Fatal(err)
	}
}

// TestAllUnreadableClassIsAnError: with skip_corrupt, a class whose every
// image is skipped is an error naming the class (dropping it would train
// the model on fewer classes than the folders name).
func TestAllUnreadableClassIsAnError(t *testing.T) {
	root := writeFolder(t)
	writeFile(t, filepath.Join(root, "train", "dog", "bad.png"), []byte("not a png"))
	writeFile(t, filepath.Join(root, "train", "dog", "huge.png"), pngClaiming(t, 20000, 20000))
	cfg := DefaultConfig()
	cfg.Name, cfg.Root, cfg.SkipCorrupt = NameFolder, root, true
	_, err := Open(cfg, Train, 3, WithLogger(&recLogger{}))
	wantErr(t, err, `class "dog"`, filepath.Join(root, "train", "dog"), "none of its 2 images")
	// In val as well.
	os.RemoveAll(filepath.Join(root, "train", "dog"))
	writeFile(t, filepath.Join(root, "val", "cat", "bad.png"), []byte("not a png"))
	os.Remove(filepath.Join(root, "val", "cat", "v.png"))
	_, err = Open(cfg, Val, 3, WithLogger(&recLogger{}))
	wantErr(t, err, `class "cat"`)
}

// TestFolderLinksStayInClass: a link out of its class folder (ln -s ..
// train/circle/up) is skipped with a warning naming it, so the other
// classes' images are not also labelled circle; a class folder that is a
// link to another class (train/square -> train/circle) is an error.
func TestFolderLinksStayInClass(t *testing.T) {
	root := writeFolder(t) // classes ant, bee, cat
	up := filepath.Join(root, "train", "ant", "up")
	if err := os.Symlink("..", up); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Name, cfg.Root = NameFolder, root
	log := &recLogger{}
	ds, err := Open(cfg, Train, 3, WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	f := ds.(*Folder)
	for i, p := range f.files {
		if want := filepath.Base(filepath.Dir(p)); f.classes[f.labels[i]] != want {
			t.Errorf("%s labelled %s", p, f.classes[f.labels[i]])
		}
	}
	if !strings.Contains(strings.Join(log.msgs, "\n"), up) {
		t.Errorf("no warning naming %s: %v", up, log.msgs)
	}
	os.Remove(up)
	if err := os.Symlink(filepath.Join(root, "train", "cat"), filepath.Join(root, "train", "dog")); err != nil {
		t.Fatal(err)
	}
	var ov *ClassOverlapError
	if _, err := Open(cfg, Train, 3); !errors.As(err, &ov) {
		t.Fatalf("train/dog -> train/cat: %v, want an error", err)
	}
}
