package train

import (
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vitgo/vit/checkpoint"
	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/evaluate"
	"github.com/vitgo/vit/layers"
)

// writeShapes writes a folder data set of 8×8 PNGs under root: 4 training
// and 2 validation images per class.
func writeShapes(t *testing.T, root string, classes ...string) {
	t.Helper()
	for ci, c := range classes {
		for split, n := range map[string]int{"train": 4, "val": 2} {
			dir := filepath.Join(root, split, c)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for i := range n {
				img := image.NewRGBA(image.Rect(0, 0, 8, 8))
				for p := range img.Pix {
					img.Pix[p] = uint8(40*ci + 7*i + p)
				}
				img.Set(i, i, color.RGBA{255, 0, 0, 255})
				f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%d.png", i)))
				if err != nil {
					t.Fatal(err)
				}
				if err := png.Encode(f, img); err != nil {
					t.Fatal(err)
				}
				f.Close()
			}
		}
	}
}

// shapesRun is a 3-step run on the folder at root, with a head of 10
// outputs (more than the classes, as a folder run may have).
func shapesRun(t *testing.T, root string) Config {
	cfg := DefaultConfig()
	cfg.Model = layers.DefaultConfig()
	cfg.Model.ImgSize, cfg.Model.PatchSize, cfg.Model.InChans = layers.Size2{8, 8}, 4, 3
	cfg.Model.EmbedDim, cfg.Model.Depth, cfg.Model.NumHeads, cfg.Model.MLPRatio, cfg.Model.NumClasses = 8, 1, 2, 2, 10
	cfg.Data = data.Config{Name: data.NameFolder, Root: root, Workers: 1}
	cfg.Train.Epochs, cfg.Train.MaxSteps, cfg.Train.BatchSize, cfg.Train.EvalBatchSize = 5, 3, 4, 4
	cfg.Train.OutDir, cfg.Train.LogEvery = t.TempDir(), 1000
	return cfg
}

// TestClassListMustMatch: after a class is added to the folders, -resume
// is refused naming it (it used to go on, the head's rows relabelled), and
// so is evaluating a checkpoint on a folder whose classes are not its own
// (it used to report one class's images under another's name). Unchanged
// classes resume and evaluate.
func TestClassListMustMatch(t *testing.T) {
	three, four := t.TempDir(), t.TempDir()
	writeShapes(t, three, "circle", "square", "triangle")
	writeShapes(t, four, "aardvark", "circle", "square", "triangle")

	cfg := shapesRun(t, three)
	if _, err := Run(context.Background(), cfg, Options{Log: quietLog()}); err != nil {
		t.Fatal(err)
	}
	writeShapes(t, three, "aardvark") // train/aardvark and val/aardvark
	cfg.Train.MaxSteps = 6
	var cl *checkpoint.ClassListError
	_, err := Run(context.Background(), cfg, Options{Log: quietLog(), Resume: true})
	if !errors.As(err, &cl) || !strings.Contains(err.Error(), `"aardvark"`) {
		t.Fatalf("resume after adding a class: %v, want a *ClassListError naming aardvark", err)
	}
	for _, split := range []string{"train", "val"} {
		os.RemoveAll(filepath.Join(three, split, "aardvark"))
	}
	if _, err := Run(context.Background(), cfg, Options{Log: quietLog(), Resume: true}); err != nil {
		t.Fatalf("resume with the same classes: %v", err)
	}

	eval := func(ckpt, root string) error {
		l := evaluate.Loader{Data: data.Config{Name: data.NameFolder, Root: root, Workers: 1}, BatchSize: 4}
		_, _, _, err := evaluate.Checkpoint(context.Background(), evaluate.Options{Checkpoint: ckpt, Loader: &l})
		return err
	}
	last3 := filepath.Join(cfg.Train.OutDir, LastModel)
	if err := eval(last3, three); err != nil {
		t.Fatalf("evaluating on the classes it was trained on: %v", err)
	}
	cfg4 := shapesRun(t, four)
	if _, err := Run(context.Background(), cfg4, Options{Log: quietLog()}); err != nil {
		t.Fatal(err)
	}
	if err := eval(filepath.Join(cfg4.Train.OutDir, LastModel), three); !errors.As(err, &cl) || !strings.Contains(err.Error(), `"aardvark"`) {
		t.Fatalf("a 4-class checkpoint on a 3-class folder: %v, want a *ClassListError naming aardvark", err)
	}
	if err := eval(last3, four); !errors.As(err, &cl) {
		t.Fatalf("a 3-class checkpoint on a 4-class folder: %v, want a *ClassListError", err)
	}
}
