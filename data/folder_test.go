package data

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/color/palette"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// pattern returns the colour of pixel (x, y) in test image k.
func pattern(k, x, y int) color.NRGBA {
	return color.NRGBA{R: uint8(10*x + k), G: uint8(20*y + 3*k), B: uint8(5*x + 7*y), A: 255}
}

func encodeImage(t *testing.T, format string, k, w, h int) []byte {
	t.Helper()
	var buf bytes.Buffer
	var err error
	switch format {
	case "png-rgba": // opaque RGBA
		m := image.NewRGBA(image.Rect(0, 0, w, h))
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				m.Set(x, y, pattern(k, x, y))
			}
		}
		err = png.Encode(&buf, m)
	case "png-alpha": // non-premultiplied colour with alpha: alpha is dropped
		m := image.NewNRGBA(image.Rect(0, 0, w, h))
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				c := pattern(k, x, y)
				c.A = uint8(40 + x)
				m.SetNRGBA(x, y, c)
			}
		}
		err = png.Encode(&buf, m)
	case "png-gray":
		m := image.NewGray(image.Rect(0, 0, w, h))
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				m.SetGray(x, y, color.Gray{Y: uint8(x*16 + y + k)})
			}
		}
		err = png.Encode(&buf, m)
	case "jpeg":
		m := image.NewRGBA(image.Rect(0, 0, w, h))
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				m.Set(x, y, color.RGBA{100, 150, 200, 255})
			}
		}
		err = jpeg.Encode(&buf, m, &jpeg.Options{Quality: 100})
	case "gif":
		m := image.NewPaletted(image.Rect(0, 0, w, h), palette.Plan9)
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				m.SetColorIndex(x, y, uint8(x+y))
			}
		}
		err = gif.Encode(&buf, m, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// folderFiles is the layout writeFolder makes: path, format, pattern k, width.
var folderFiles = []struct {
	path, format string
	k, w         int
}{
	{"train/cat/1.png", "png-rgba", 0, 6},
	{"train/cat/2.jpg", "jpeg", 1, 7},
	{"train/ant/a.png", "png-alpha", 2, 8},
	{"train/ant/b.GIF", "gif", 0, 6},
	{"train/bee/x.png", "png-gray", 1, 7},
	{"train/bee/y.jpeg", "jpeg", 2, 8},
	{"val/cat/v.png", "png-rgba", 0, 6},
	{"val/bee/w.png", "png-gray", 1, 7},
}

// writeFolder lays out root/{train,val}/{cat,ant,bee}/ with mixed formats.
func writeFolder(t *testing.T) string {
	root := t.TempDir()
	for _, f := range folderFiles {
		writeFile(t, filepath.Join(root, f.path), encodeImage(t, f.format, f.k, f.w, 5))
	}
	writeFile(t, filepath.Join(root, "train", "cat", ".DS_Store"), []byte("junk")) // hidden: ignored
	return root
}

type recLogger struct {
	mu   sync.Mutex
	msgs []string
}

func (l *recLogger) Warnf(f string, a ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, fmt.Sprintf(f, a...))
}

func TestFolderDataset(t *testing.T) {
	root := writeFolder(t)
	cfg := DefaultConfig()
	cfg.Name, cfg.Root = NameFolder, root
	ds, err := Open(cfg, Train, 3)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ds.Classes(), ","); got != "ant,bee,cat" {
		t.Fatalf("classes %s, want sorted ant,bee,cat", got)
	}
	if ds.Len() != 6 {
		t.Fatalf("len %d, want 6", ds.Len())
	}
	f := ds.(*Folder)
	wantLabels := []int{0, 0, 1, 1, 2, 2}
	for i := 0; i < ds.Len(); i++ {
		img, l, err := ds.Item(i)
		if err != nil {
			t.Fatal(err)
		}
		if l != wantLabels[i] || img.C != 3 || img.H != 5 {
			t.Fatalf("item %d (%s): label %d shape %dx%dx%d", i, f.Path(i), l, img.C, img.H, img.W)
		}
		hw := img.H * img.W
		px := func(ch, x, y int) uint8 { return img.Pix[ch*hw+y*img.W+x] }
		switch filepath.Base(f.Path(i)) {
		case "a.png": // alpha dropped, colour kept
			c := pattern(2, 2, 3)
			if px(0, 2, 3) != c.R || px(1, 2, 3) != c.G || px(2, 2, 3) != c.B {
				t.Errorf("a.png pixel (2,3) = %d,%d,%d, want %d,%d,%d", px(0, 2, 3), px(1, 2, 3), px(2, 2, 3), c.R, c.G, c.B)
			}
		case "x.png": // gray replicated
			if px(0, 3, 2) != px(1, 3, 2) || px(0, 3, 2) != px(2, 3, 2) || px(0, 3, 2) < 48 {
				t.Errorf("x.png gray pixel not replicated: %d %d %d", px(0, 3, 2), px(1, 3, 2), px(2, 3, 2))
			}
		case "2.jpg", "y.jpeg": // flat colour within JPEG error
			if d := int(px(2, 1, 1)) - 200; d < -3 || d > 3 {
				t.Errorf("%s blue %d, want ≈200", f.Path(i), px(2, 1, 1))
			}
		case "b.GIF":
			want := color.NRGBAModel.Convert(palette.Plan9[3]).(color.NRGBA)
			if px(0, 1, 2) != want.R || px(1, 1, 2) != want.G || px(2, 1, 2) != want.B {
				t.Errorf("gif pixel mismatch")
			}
		}
	}
	// Grayscale: PIL "L" luma of the RGB pixels.
	gray, err := Open(cfg, Train, 1)
	if err != nil {
		t.Fatal(err)
	}
	rgb, _, _ := ds.Item(4)
	g, _, _ := gray.Item(4)
	hw := g.H * g.W
	for i := 0; i < hw; i++ {
		if want := lumaU8(rgb.Pix[i], rgb.Pix[hw+i], rgb.Pix[2*hw+i]); g.Pix[i] != want {
			t.Fatalf("gray pixel %d = %d, want %d", i, g.Pix[i], want)
		}
	}
	if m, s := gray.Norm(); m[0] != 0.5 || s[0] != 0.5 {
		t.Errorf("gray folder norm %v %v", m, s)
	}
	if m, _ := ds.Norm(); m[1] != 0.456 {
		t.Errorf("RGB folder norm %v", m)
	}

	// Val uses train's class numbering and may lack a class.
	val, err := Open(cfg, Val, 3)
	if err != nil {
		t.Fatal(err)
	}
	_, l0, _ := val.Item(0)
	_, l1, _ := val.Item(1)
	if val.Len() != 2 || l0 != 1 || l1 != 2 || len(val.Classes()) != 3 {
		t.Fatalf("val: len %d labels %d %d classes %v", val.Len(), l0, l1, val.Classes())
	}
	// Limits keep the first N files.
	cfg.LimitTrain = 3
	lim, err := Open(cfg, Train, 3)
	if err != nil || lim.Len() != 3 {
		t.Fatalf("limit: %v", err)
	}
}

func TestFolderErrors(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Name = NameFolder

	cfg.Root = filepath.Join(t.TempDir(), "none")
	_, err := Open(cfg, Train, 3)
	wantErr(t, err, cfg.Root)

	root := writeFolder(t)
	cfg.Root = root
	writeFile(t, filepath.Join(root, "train", "cat", "bad.png"), []byte("not a png"))
	_, err = Open(cfg, Train, 3)
	wantErr(t, err, filepath.Join(root, "train", "cat", "bad.png"), "skip_corrupt")

	// skip_corrupt counts and logs instead.
	cfg.SkipCorrupt = true
	log := &recLogger{}
	ds, err := Open(cfg, Train, 3, WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	if ds.Len() != 6 || ds.(*Folder).Skipped() != 1 || len(log.msgs) != 1 || !strings.Contains(log.msgs[0], "bad.png") {
		t.Fatalf("skip: len %d skipped %d log %v", ds.Len(), ds.(*Folder).Skipped(), log.msgs)
	}
	cfg.SkipCorrupt = false

	// A file whose header decodes but whose pixels do not fails in Item, naming it.
	root = writeFolder(t)
	cfg.Root = root
	good := encodeImage(t, "png-rgba", 0, 6, 5)
	trunc := filepath.Join(root, "train", "ant", "c.png")
	writeFile(t, trunc, good[:len(good)-30])
	ds, err = Open(cfg, Train, 3)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = ds.Item(2)
	wantErr(t, err, trunc)
	cfg.SkipCorrupt = true
	ds, _ = Open(cfg, Train, 3, WithLogger(&recLogger{}))
	if _, l, err := ds.Item(2); err != nil || l != 1 || ds.(*Folder).Skipped() != 1 {
		t.Fatalf("skip in Item: label %d err %v skipped %d", l, err, ds.(*Folder).Skipped())
	}
	cfg.SkipCorrupt = false

	// Empty class folder.
	root = writeFolder(t)
	cfg.Root = root
	writeFile(t, filepath.Join(root, "train", "emu", ".keep"), nil)
	_, err = Open(cfg, Train, 3)
	wantErr(t, err, filepath.Join(root, "train", "emu"), "no images")

	// Non-image file in a class folder.
	root = writeFolder(t)
	cfg.Root = root
	writeFile(t, filepath.Join(root, "train", "cat", "notes.txt"), []byte("hi"))
	_, err = Open(cfg, Train, 3)
	wantErr(t, err, "notes.txt", "not an image")

	// Val class unknown to train.
	root = writeFolder(t)
	cfg.Root = root
	writeFile(t, filepath.Join(root, "val", "yak", "1.png"), encodeImage(t, "png-gray", 0, 4, 4))
	_, err = Open(cfg, Val, 3)
	wantErr(t, err, filepath.Join(root, "val", "yak"), "train")

	// Missing val directory.
	root = writeFolder(t)
	cfg.Root = root
	if err := os.RemoveAll(filepath.Join(root, "val")); err != nil {
		t.Fatal(err)
	}
	_, err = Open(cfg, Val, 3)
	wantErr(t, err, filepath.Join(root, "val"), "class")

	// Labels ≥ num_classes are refused by the loader.
	ds, _ = Open(cfg, Train, 3)
	_, err = NewLoader(ds, LoaderConfig{BatchSize: 2, ImgH: 8, ImgW: 8, NumClasses: 2, Augment: DefaultAugmentConfig(), Mixup: DefaultMixupConfig()})
	wantErr(t, err, "3 classes", "num_classes is 2")
}
