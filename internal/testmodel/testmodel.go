// Package testmodel is the small trained checkpoint that the tests and
// examples of classify, cmd/eval and examples/classify_server classify
// with: a three-class ViT ("blue", "green", "red") that tells which colour
// dominates an image.
//
// The checkpoint is committed (testdata/tiny.safetensors) and embedded, so
// that serving's tests need no trainer: this package imports nothing outside
// internal/. It is what the trainer makes of Config on the data set WriteData
// writes; train's TestTestModelFixture trains it again and compares every
// tensor bit for bit (go test ./train -run TestTestModelFixture
// -update-testmodel rewrites the file).
package testmodel

import (
	_ "embed"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"

	"github.com/vitgo/vit/internal/atomicfile"
	"github.com/vitgo/vit/internal/regfile"
)

// Classes are the tiny model's class names, in label order.
var Classes = []string{"blue", "green", "red"}

// File is the committed checkpoint's path, from the repository root.
const File = "internal/testmodel/testdata/tiny.safetensors"

// Config is the training config of the checkpoint: a 16×16, patch-8 ViT
// trained for ten epochs (60 steps) on WriteData's images. data.root and
// train.out_dir are set on top of it.
const Config = `
model: {img_size: 16, patch_size: 8, in_chans: 3, embed_dim: 16, depth: 1, num_heads: 2, mlp_ratio: 2, num_classes: 3, drop_path_rate: 0}
data: {name: folder, workers: 2}
optim: {lr: 1.0e-2, warmup_epochs: 0}
train: {epochs: 10, batch_size: 8, eval_batch_size: 16, seed: 1}
`

//go:embed testdata/tiny.safetensors
var tiny []byte

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

// Checkpoint writes the trained checkpoint to dir/run/last.safetensors and
// returns that path. It classifies Colour images correctly.
func Checkpoint(dir string) (string, error) {
	run := filepath.Join(dir, "run")
	if err := os.MkdirAll(run, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(run, "last.safetensors")
	if err := atomicfile.WriteBytes(path, tiny); err != nil {
		return "", err
	}
	return path, nil
}

// Bytes returns a copy of the committed checkpoint's bytes.
func Bytes() []byte { return append([]byte(nil), tiny...) }

// WriteData writes the colour data set the checkpoint was trained on under
// root, as image folders: root/train/<class>/NN.png and root/val/<class>/NN.png,
// 16 images of each class in each split.
func WriteData(root string) error {
	for s, split := range []string{"train", "val"} {
		for class, name := range Classes {
			cdir := filepath.Join(root, split, name)
			if err := os.MkdirAll(cdir, 0o755); err != nil {
				return err
			}
			for i := 0; i < 16; i++ {
				img := Colour(class, 12+i%9, 20-i%7, uint32(1000*s+100*class+i))
				if err := writePNG(filepath.Join(cdir, fmt.Sprintf("%02d.png", i)), img); err != nil {
					return err
				}
			}
		}
	}
	return nil
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
