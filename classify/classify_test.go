package classify_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/checkpoint"
	"github.com/vitgo/vit/classify"
	"github.com/vitgo/vit/internal/testmodel"
	"github.com/vitgo/vit/layers"
)

var (
	ckptOnce sync.Once
	ckptPath string
	ckptErr  error
	ckptDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if ckptDir != "" {
		os.RemoveAll(ckptDir)
	}
	os.Exit(code)
}

// tiny returns the path of the tiny trained checkpoint, written once per
// test binary by testmodel.Checkpoint.
func tiny(t testing.TB) string {
	t.Helper()
	ckptOnce.Do(func() {
		ckptDir, ckptErr = os.MkdirTemp("", "classify-test-*")
		if ckptErr == nil {
			ckptPath, ckptErr = testmodel.Checkpoint(ckptDir)
		}
	})
	if ckptErr != nil {
		t.Fatal(ckptErr)
	}
	return ckptPath
}

func load(t *testing.T, o classify.Options) *classify.Classifier {
	t.Helper()
	c, err := classify.Load(tiny(t), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// colourModels converts img to the colour models a decoder may return.
func colourModels(img *image.NRGBA) map[string]image.Image {
	b := img.Bounds()
	rgba := image.NewRGBA(b)
	draw.Draw(rgba, b, img, b.Min, draw.Src)
	var jb bytes.Buffer
	jpeg.Encode(&jb, img, &jpeg.Options{Quality: 95})
	ycc, _ := jpeg.Decode(&jb)
	pal := image.NewPaletted(b, nil)
	for i := 0; i < 256; i++ {
		pal.Palette = append(pal.Palette, color.NRGBA{uint8(i & 0xe0), uint8(i << 3 & 0xe0), uint8(i << 6 & 0xc0), 255})
	}
	draw.Draw(pal, b, img, b.Min, draw.Src)
	offset := img.SubImage(image.Rect(1, 1, b.Dx(), b.Dy())) // non-zero Min
	return map[string]image.Image{"NRGBA": img, "RGBA": rgba, "YCbCr": ycc, "Paletted": pal, "SubImage": offset}
}

func TestClassifyColours(t *testing.T) {
	c := load(t, classify.Options{TopK: 2})
	if got := fmt.Sprint(c.Classes()); got != "[blue green red]" {
		t.Fatalf("Classes() = %s", got)
	}
	for class, name := range testmodel.Classes {
		for _, size := range [][2]int{{16, 16}, {7, 40}, {300, 200}} {
			for model, img := range colourModels(testmodel.Colour(class, size[0], size[1], 99)) {
				preds, err := c.Classify(context.Background(), []image.Image{img})
				if err != nil {
					t.Fatal(err)
				}
				p := preds[0]
				if len(p) != 2 || p[0].Label != name || p[0].Class != class || p[0].Prob < p[1].Prob || p[0].Prob+p[1].Prob > 1+1e-9 {
					t.Errorf("%s %v %s: %+v", name, size, model, p)
				}
			}
		}
	}
}

func TestGrayImageGivesEqualChannels(t *testing.T) {
	// A gray image becomes three equal channels: no class dominates, and the
	// answer equals that of the same picture as RGB.
	g := image.NewGray(image.Rect(0, 0, 20, 20))
	rgb := image.NewNRGBA(g.Bounds())
	for i := range g.Pix {
		v := uint8(i * 7)
		g.Pix[i] = v
		rgb.Pix[4*i], rgb.Pix[4*i+1], rgb.Pix[4*i+2], rgb.Pix[4*i+3] = v, v, v, 255
	}
	c := load(t, classify.Options{})
	p, err := c.Classify(context.Background(), []image.Image{g, rgb})
	if err != nil {
		t.Fatal(err)
	}
	if !classify.SamePredictions(p[0], p[1]) {
		t.Errorf("gray %v != rgb %v", p[0], p[1])
	}
}

// reference classifies each image alone on a fresh classifier.
func reference(t *testing.T, imgs []image.Image) [][]classify.Prediction {
	c := load(t, classify.Options{PoolSize: 1, MaxBatch: 1, TopK: 3})
	var out [][]classify.Prediction
	for _, img := range imgs {
		p, err := c.Classify(context.Background(), []image.Image{img})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p[0])
	}
	return out
}

func samePreds(a, b []classify.Prediction) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Class != b[i].Class || math.Abs(a[i].Prob-b[i].Prob) > 1e-5 {
			return false
		}
	}
	return true
}

func testImages(n int) []image.Image {
	var imgs []image.Image
	for i := 0; i < n; i++ {
		imgs = append(imgs, testmodel.Colour(i%3, 10+i%13, 30-i%11, uint32(7*i)))
	}
	return imgs
}

func TestLongRequestIsSplit(t *testing.T) {
	imgs := testImages(11)
	want := reference(t, imgs)
	c := load(t, classify.Options{MaxBatch: 4, TopK: 3})
	got, err := c.Classify(context.Background(), imgs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range imgs {
		if !samePreds(got[i], want[i]) {
			t.Errorf("image %d: %v, alone %v", i, got[i], want[i])
		}
	}
	if s := c.Stats(); s.MaxBatch > 4 || s.Images != 11 {
		t.Errorf("stats %+v: want 11 images in batches of at most 4", s)
	}
}

// TestClassifyConcurrent runs many callers with requests of 0 to 9 images
// on a pool of two lanes (run it under -race): every answer equals the
// image's answer alone, and no batch exceeds MaxBatch.
func TestClassifyConcurrent(t *testing.T) {
	imgs := testImages(24)
	want := reference(t, imgs)
	c := load(t, classify.Options{PoolSize: 2, MaxBatch: 4, TopK: 3})
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < 4; r++ {
				start, n := (g*5+r*3)%len(imgs), (g+r)%10
				var idx []int
				var req []image.Image
				for k := 0; k < n; k++ {
					idx = append(idx, (start+k)%len(imgs))
					req = append(req, imgs[(start+k)%len(imgs)])
				}
				got, err := c.Classify(context.Background(), req)
				if err != nil {
					errs <- err
					return
				}
				if len(got) != n {
					errs <- fmt.Errorf("caller %d: %d answers for %d images", g, len(got), n)
					return
				}
				for k, i := range idx {
					if !samePreds(got[k], want[i]) {
						errs <- fmt.Errorf("caller %d image %d: %v, alone %v", g, i, got[k], want[i])
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	s := c.Stats()
	if s.MaxBatch > 4 || s.MaxBatch < 1 {
		t.Errorf("stats %+v: want batches of 1..4", s)
	}
	t.Logf("%d images in %d batches (mean %.2f)", s.Images, s.Batches, float64(s.Images)/float64(s.Batches))
}

func TestClassifyErrors(t *testing.T) {
	c := load(t, classify.Options{MaxPixels: 1000})
	imgs := testImages(3)
	big := image.NewGray(image.Rect(0, 0, 100, 11))
	_, err := c.Classify(context.Background(), []image.Image{imgs[0], big, imgs[1]})
	var ie *classify.ImageError
	var tl *classify.TooLargeError
	if !errors.As(err, &ie) || ie.Index != 1 || !errors.As(err, &tl) || tl.Width != 100 || tl.Height != 11 {
		t.Errorf("too large: %v", err)
	}
	_, err = c.Classify(context.Background(), []image.Image{nil})
	if !errors.As(err, &ie) || ie.Index != 0 {
		t.Errorf("nil image: %v", err)
	}
	_, err = c.Classify(context.Background(), []image.Image{image.NewRGBA(image.Rect(0, 0, 0, 5))})
	if !errors.As(err, &ie) {
		t.Errorf("empty image: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Classify(ctx, imgs); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}
	if got, err := c.Classify(context.Background(), nil); err != nil || len(got) != 0 {
		t.Errorf("empty request: %v %v", got, err)
	}
	c.Close()
	if _, err := c.Classify(context.Background(), imgs); !errors.Is(err, classify.ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.safetensors")
	os.WriteFile(junk, []byte("not a checkpoint"), 0o644)
	for _, tc := range []struct {
		path string
		o    classify.Options
	}{
		{filepath.Join(dir, "missing.safetensors"), classify.Options{}},
		{junk, classify.Options{}},
		{tiny(t), classify.Options{CropPct: 1.5}},
		{tiny(t), classify.Options{PoolSize: -1}},
		{tiny(t), classify.Options{Resize: "nearest"}},
	} {
		if c, err := classify.Load(tc.path, tc.o); err == nil {
			c.Close()
			t.Errorf("%s %+v: no error", tc.path, tc.o)
		}
	}
}

func TestNonFiniteLogits(t *testing.T) {
	m, meta, _, err := checkpoint.LoadModel(tiny(t), tensor.Float32, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	m.Param("head.bias").Value.Data().([]float32)[1] = float32(math.NaN())
	path := filepath.Join(t.TempDir(), "nan.safetensors")
	if err := checkpoint.SaveModel(path, m, meta, nil); err != nil {
		t.Fatal(err)
	}
	c, err := classify.Load(path, classify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Classify(context.Background(), testImages(3))
	var nf *classify.NonFiniteError
	if !errors.As(err, &nf) || nf.Index != 0 {
		t.Errorf("got %v, want a NonFiniteError for image 0", err)
	}
}

func TestClassifyAtAnotherSize(t *testing.T) {
	c := load(t, classify.Options{ImgSize: &layers.Size2{32, 24}, PosInterp: "bilinear"})
	if ch, h, w := c.InputSize(); ch != 3 || h != 32 || w != 24 {
		t.Errorf("input %d×%d×%d", ch, h, w)
	}
	if len(c.Notes()) == 0 {
		t.Errorf("no note on the resampled position table")
	}
	p, err := c.Classify(context.Background(), []image.Image{testmodel.Colour(2, 50, 50, 3)})
	if err != nil || p[0][0].Label != "red" {
		t.Errorf("%v %v", p, err)
	}
}

func writeImage(t *testing.T, path string, img image.Image) {
	t.Helper()
	var b bytes.Buffer
	var err error
	if filepath.Ext(path) == ".jpg" {
		err = jpeg.Encode(&b, img, &jpeg.Options{Quality: 95})
	} else {
		err = png.Encode(&b, img)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestClassifyFiles(t *testing.T) {
	dir := t.TempDir()
	want := map[string]string{}
	var decoded []image.Image
	for i := 0; i < 13; i++ {
		p := filepath.Join(dir, "set", fmt.Sprintf("sub%d", i%2), fmt.Sprintf("%02d.png", i))
		if i%4 == 3 {
			p = p[:len(p)-4] + ".jpg"
		}
		img := testmodel.Colour(i%3, 10+i, 40-i, uint32(i))
		writeImage(t, p, img)
		want[p] = testmodel.Classes[i%3]
		b, _ := os.ReadFile(p)
		d, _, _ := image.Decode(bytes.NewReader(b))
		decoded = append(decoded, d)
	}
	bad := filepath.Join(dir, "set", "sub0", "05b.png")
	os.WriteFile(bad, []byte("\x89PNG garbage"), 0o644)
	os.WriteFile(filepath.Join(dir, "set", "notes.txt"), []byte("skipped"), 0o644)
	writeImage(t, filepath.Join(dir, "set", ".hidden", "x.png"), testmodel.Colour(0, 4, 4, 0))
	huge := filepath.Join(dir, "huge.png")
	writeImage(t, huge, image.NewGray(image.Rect(0, 0, 300, 300)))
	glob := filepath.Join(dir, "set", "sub1", "*.jpg")
	missing := filepath.Join(dir, "missing.png")

	paths, err := classify.ExpandPaths([]string{filepath.Join(dir, "set"), missing, glob, huge})
	if err != nil {
		t.Fatal(err)
	}
	// 13 images and the bad one under set/ (sub0 then sub1), the missing
	// file, the glob's .jpg files in sub1 (03, 07, 11), the huge one.
	if len(paths) != 14+1+3+1 {
		t.Fatalf("%d paths: %v", len(paths), paths)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(filepath.Join(dir, "set"), link); err == nil {
		viaLink, err := classify.ExpandPaths([]string{link})
		if err != nil || len(viaLink) != 14 || viaLink[0] != filepath.Join(link, "sub0", "00.png") {
			t.Errorf("through a named symlink: %v %v", viaLink, err)
		}
	}
	c := load(t, classify.Options{PoolSize: 2, MaxBatch: 2, MaxPixels: 10000, Workers: 3})
	var got []classify.Result
	err = c.ClassifyFiles(context.Background(), paths, func(r classify.Result) error {
		got = append(got, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(paths) {
		t.Fatalf("%d results for %d paths", len(got), len(paths))
	}
	var fe *classify.FileError
	var tl *classify.TooLargeError
	for i, r := range got {
		if r.Index != i || r.Path != paths[i] {
			t.Errorf("result %d is %d %s, want %s", i, r.Index, r.Path, paths[i])
		}
		switch r.Path {
		case bad, missing:
			if !errors.As(r.Err, &fe) || fe.Path != r.Path {
				t.Errorf("%s: err %v", r.Path, r.Err)
			}
		case huge:
			if !errors.As(r.Err, &tl) || tl.Width != 300 || tl.Path != huge {
				t.Errorf("%s: err %v", r.Path, r.Err)
			}
		default:
			if r.Err != nil || len(r.Predictions) != 3 || r.Predictions[0].Label != want[r.Path] {
				t.Errorf("%s: %v %v, want %s", r.Path, r.Predictions, r.Err, want[r.Path])
			}
		}
	}
	// The loader's path gives the same answers as Classify on the decoded
	// images.
	ref, err := c.Classify(context.Background(), decoded)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 13; i++ {
		p := filepath.Join(dir, "set", fmt.Sprintf("sub%d", i%2), fmt.Sprintf("%02d.png", i))
		if i%4 == 3 {
			p = p[:len(p)-4] + ".jpg"
		}
		for _, r := range got {
			if r.Path == p && !samePreds(r.Predictions, ref[i]) {
				t.Errorf("%s: files %v, Classify %v", p, r.Predictions, ref[i])
			}
		}
	}
	// fn's error stops the stream.
	stop := errors.New("stop")
	n := 0
	err = c.ClassifyFiles(context.Background(), paths, func(classify.Result) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("stop: %v after %d", err, n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n = 0
	err = c.ClassifyFiles(ctx, paths, func(classify.Result) error {
		if n++; n == 3 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || n >= len(paths) {
		t.Errorf("cancel: %v after %d results", err, n)
	}
}

func TestCropPct(t *testing.T) {
	// A picture whose centre is red and whose border is blue: the plain
	// resize sees mostly blue, the centre crop at crop_pct 0.5 only red.
	img := testmodel.Colour(0, 64, 64, 1)
	red := testmodel.Colour(2, 32, 32, 2)
	draw.Draw(img, image.Rect(16, 16, 48, 48), red, image.Point{}, draw.Src)
	for _, tc := range []struct {
		pct  float64
		want string
	}{{0, "blue"}, {0.5, "red"}} {
		c := load(t, classify.Options{CropPct: tc.pct})
		p, err := c.Classify(context.Background(), []image.Image{img})
		if err != nil || p[0][0].Label != tc.want {
			t.Errorf("crop_pct %v: %v %v, want %s", tc.pct, p, err, tc.want)
		}
	}
}
