package train_test

import (
	"path/filepath"
	"testing"

	"github.com/vitgo/vit/classify"
	"github.com/vitgo/vit/train"
)

// TestLanesEstimatePinned pins classify.EstimateLanes (3 lanes of batch 16,
// a loader of 8) for the model of every configs/*.yaml, byte for byte: the
// lanes read the estimate's evaluation part, which moved to its owners.
func TestLanesEstimatePinned(t *testing.T) {
	files, err := filepath.Glob("../configs/*.yaml")
	if err != nil || len(files) != len(pinnedLanes) {
		t.Fatalf("%d configs, %d pinned (%v)", len(files), len(pinnedLanes), err)
	}
	for _, f := range files {
		cfg, err := train.LoadConfig(f, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := classify.EstimateLanes(cfg.Model.WithDefaults(), 3, 16, 8), pinnedLanes[filepath.Base(f)]; got != want {
			t.Errorf("%s: lanes %d, pinned %d", f, got, want)
		}
	}
}

// pinnedLanes are the lanes' estimates before the estimate's parts moved.
var pinnedLanes = map[string]int64{
	"cifar10_vit_small.yaml":                 107182644,
	"fashion_mnist_deit_tiny_distilled.yaml": 52649276,
	"fashion_mnist_vit_teacher.yaml":         61365080,
	"fashion_mnist_vit_tiny.yaml":            52343896,
	"mnist_finetune_56.yaml":                 78966100,
	"mnist_vit_tiny.yaml":                    40315060,
	"mnist_vit_tiny_p4.yaml":                 47032408,
	"vit_base_patch16_224.yaml":              1208867532,
	"vit_tiny_patch16_224.yaml":              351694284,
}
