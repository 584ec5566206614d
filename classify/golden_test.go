package classify

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/checkpoint"
	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/layers"
)

// goldenInputs writes the checkpoint and images that
// experiments/goldens/classify_golden.py feeds to real timm: a 16×16,
// patch-8 ViT with deterministic, perturbed weights, and three PNGs (RGB,
// gray, RGBA with alpha) of sizes that need resizing both ways.
func goldenInputs(dir string) (ckpt string, pngs []string, err error) {
	cfg := layers.DefaultConfig()
	cfg.ImgSize, cfg.PatchSize, cfg.EmbedDim, cfg.Depth, cfg.NumHeads, cfg.MLPRatio, cfg.NumClasses = layers.Size2{16, 16}, 8, 24, 2, 2, 2, 5
	cfg.ZeroInitHead.Set(false)
	m, err := layers.New(cfg, tensor.Float32, 7)
	if err != nil {
		return "", nil, err
	}
	for k, p := range m.Params { // larger weights than the init, so the logits differ
		d := p.Value.Data().([]float32)
		for i := range d {
			d[i] += float32(0.3 * math.Sin(float64(i)*0.7+float64(k)))
		}
	}
	meta := checkpoint.ModelMeta{Dataset: "folder", Mean: []float64{0.5, 0.4, 0.3}, Std: []float64{0.2, 0.25, 0.3},
		Classes: []string{"a", "b", "c", "d", "e"}, Weights: "raw"}
	ckpt = filepath.Join(dir, "golden.safetensors")
	if err := checkpoint.SaveModel(ckpt, m, meta, nil); err != nil {
		return "", nil, err
	}
	rgb := image.NewNRGBA(image.Rect(0, 0, 37, 23))
	gray := image.NewGray(image.Rect(0, 0, 11, 50))
	rgba := image.NewNRGBA(image.Rect(0, 0, 30, 30))
	for y := 0; y < 50; y++ {
		for x := 0; x < 37; x++ {
			v := func(k int) uint8 { return uint8((x*x*7 + y*13*k + x*y*k + 31*k) % 256) }
			rgb.SetNRGBA(x, y, color.NRGBA{v(1), v(2), v(3), 255})
			gray.SetGray(x, y, color.Gray{v(4)})
			rgba.SetNRGBA(x, y, color.NRGBA{v(5), v(6), v(7), v(8)})
		}
	}
	for i, img := range []image.Image{rgb, gray, rgba} {
		p := filepath.Join(dir, fmt.Sprintf("img%d.png", i))
		var b bytes.Buffer
		if err := png.Encode(&b, img); err != nil {
			return "", nil, err
		}
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			return "", nil, err
		}
		pngs = append(pngs, p)
	}
	return ckpt, pngs, nil
}

// TestWriteGoldenInputs writes goldenInputs into $CLASSIFY_GOLDEN_DIR for
// the generator script; without it, it does nothing.
func TestWriteGoldenInputs(t *testing.T) {
	dir := os.Getenv("CLASSIFY_GOLDEN_DIR")
	if dir == "" {
		t.Skip("CLASSIFY_GOLDEN_DIR not set")
	}
	if _, _, err := goldenInputs(dir); err != nil {
		t.Fatal(err)
	}
}

// TestMatchesTimm compares the preprocessing and the logits with real timm
// (testdata/timm_golden.json, from experiments/goldens/classify_golden.py):
// timm's VisionTransformer loads our checkpoint with strict=True; on timm's
// own input tensors our logits agree to 1e-5; timm's eval crop
// (transforms_imagenet_eval, PIL bilinear) is reproduced bit for bit; the
// default resize agrees with torch's F.interpolate to 1e-6; and
// the whole path from PNG file to probabilities agrees to 1e-5.
func TestMatchesTimm(t *testing.T) {
	raw, err := os.ReadFile("testdata/timm_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var gold struct {
		Cases []struct {
			Image     int
			CropPct   float64   `json:"crop_pct"` // 0: the default resize
			Uint8     []int     // timm's transform before ToTensor (crop cases)
			Input     []float64 // the normalized input (default resize)
			Logits    []float64
			TimmProbs []float64 `json:"probs"`
		}
	}
	if err := json.Unmarshal(raw, &gold); err != nil {
		t.Fatal(err)
	}
	if len(gold.Cases) == 0 {
		t.Fatal("no cases")
	}
	dir := t.TempDir()
	ckpt, pngs, err := goldenInputs(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, gc := range gold.Cases {
		name := fmt.Sprintf("img%d crop_pct %v", gc.Image, gc.CropPct)
		c, err := Load(ckpt, Options{CropPct: gc.CropPct, TopK: 5})
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(pngs[gc.Image])
		if err != nil {
			t.Fatal(err)
		}
		img, err := Decode(pngs[gc.Image], f, DefaultMaxPixels)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		// 1. The model alone, on timm's input tensor: stored for the default
		// resize, ToTensor and Normalize of timm's uint8 crop otherwise.
		x := make([]float32, 3*16*16)
		for i := range x {
			if gc.CropPct == 0 {
				x[i] = float32(gc.Input[i])
			} else {
				ch := i / 256
				x[i] = (float32(gc.Uint8[i])/255 - float32(c.mean[ch])) / float32(c.std[ch])
			}
		}
		preds, err := c.run(context.Background(), [][]float32{x})
		if err != nil {
			t.Fatal(err)
		}
		logits, err := c.lanes[0].evals[0].Logits(x, 1)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range gc.Logits {
			if d := math.Abs(float64(logits[i]) - v); d > 1e-5 {
				t.Errorf("%s: logit %d = %v, timm %v (|Δ| %.2g)", name, i, logits[i], v, d)
			}
		}
		for _, p := range preds[0] {
			if d := math.Abs(p.Prob - gc.TimmProbs[p.Class]); d > 1e-5 {
				t.Errorf("%s: prob %d = %v, timm %v", name, p.Class, p.Prob, gc.TimmProbs[p.Class])
			}
		}
		// 2. The transform.
		u, err := data.FromImage(img, 3)
		if err != nil {
			t.Fatal(err)
		}
		mine := make([]float32, len(x))
		if err := c.transform(mine, u); err != nil {
			t.Fatal(err)
		}
		if gc.CropPct != 0 {
			crop, err := data.CenterCrop(u, 16, 16, gc.CropPct)
			if err != nil {
				t.Fatal(err)
			}
			off := 0
			for i, v := range gc.Uint8 {
				if int(crop.Pix[i]) != v {
					off++
				}
			}
			if off > 0 {
				t.Errorf("%s: %d of %d pixels differ from timm's (PIL's)", name, off, len(gc.Uint8))
			}
		} else {
			var worst float64
			for i := range x {
				worst = math.Max(worst, math.Abs(float64(mine[i]-x[i])))
			}
			if worst > 1e-6 {
				t.Errorf("%s: default resize differs from torch by %.2g", name, worst)
			}
		}
		// 3. The whole path, file to probabilities.
		got, err := c.Classify(context.Background(), []image.Image{img})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range got[0] {
			if d := math.Abs(p.Prob - gc.TimmProbs[p.Class]); d > 1e-5 {
				t.Errorf("%s: end to end prob %d = %v, timm %v", name, p.Class, p.Prob, gc.TimmProbs[p.Class])
			}
		}
		c.Close()
	}
}
