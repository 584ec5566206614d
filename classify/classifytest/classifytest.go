// Package classifytest trains the small checkpoints that the tests and
// examples of classify, cmd/eval and examples/classify_server classify
// with: a three-class ViT ("blue", "green", "red") that learns in a second
// which colour dominates an image.
package classifytest

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"path/filepath"

	"github.com/sirupsen/logrus"

	"github.com/vitgo/vit/internal/regfile"
	"github.com/vitgo/vit/train"
)

// Classes are the tiny model's class names, in label order.
var Classes = []string{"blue", "green", "red"}

// Colour returns a w×h image whose class-th channel (in Classes' order)
// dominates, with per-pixel noise drawn from seed.
func Colour(class, w, h int, seed uint32) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	s := seed*2654435761 + 1
	next := func() uint8 { s = s*1664525 + 1013904223; return uint8(s >> 26) } // 0..63
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			c := [3]uint8{next(), next(), next()}
			c[2-class] = 160 + next()
			img.SetNRGBA(x, y, color.NRGBA{c[0], c[1], c[2], 255})
		}
	}
	return img
}

// Train writes a small colour data set under dir and trains a 16×16,
// patch-8 ViT on it for ten epochs (60 steps); it returns the path of the final
// checkpoint (dir/run/last.safetensors), which classifies Colour images
// correctly.
func Train(dir string) (string, error) {
	for s, split := range []string{"train", "val"} {
		for class, name := range Classes {
			cdir := filepath.Join(dir, "data", split, name)
			if err := os.MkdirAll(cdir, 0o755); err != nil {
				return "", err
			}
			for i := 0; i < 16; i++ {
				img := Colour(class, 12+i%9, 20-i%7, uint32(1000*s+100*class+i))
				if err := writePNG(filepath.Join(cdir, fmt.Sprintf("%02d.png", i)), img); err != nil {
					return "", err
				}
			}
		}
	}
	out := filepath.Join(dir, "run")
	cfg, err := train.ParseConfig([]byte(`
model: {img_size: 16, patch_size: 8, in_chans: 3, embed_dim: 16, depth: 1, num_heads: 2, mlp_ratio: 2, num_classes: 3, drop_path_rate: 0}
data: {name: folder, workers: 2}
optim: {lr: 1.0e-2, warmup_epochs: 0}
train: {epochs: 10, batch_size: 8, eval_batch_size: 16, seed: 1}
`), []string{"data.root=" + filepath.Join(dir, "data"), "train.out_dir=" + out})
	if err != nil {
		return "", err
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	if _, err := train.Run(context.Background(), cfg, train.Options{Log: log}); err != nil {
		return "", err
	}
	return filepath.Join(out, train.LastModel), nil
}

func writePNG(path string, img image.Image) error {
	f, _, err := regfile.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
