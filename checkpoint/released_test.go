package checkpoint_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/vitgo/vit/checkpoint"
	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/layers"
)

// TestReleasedModelRefused: a serving model that kept only its int8
// weights (layers' ReleaseFloatWeights) cannot be saved or have weights
// loaded into it: each is a *layers.ReleasedError, not a panic on the
// released tensors.
func TestReleasedModelRefused(t *testing.T) {
	src := tinyModel(t, nil)
	path := filepath.Join(t.TempDir(), "m.safetensors")
	if err := checkpoint.SaveModel(path, src, checkpoint.ModelMeta{Dataset: "mnist"}, nil); err != nil {
		t.Fatal(err)
	}
	f, _, _, err := checkpoint.ReadModel(path)
	if err != nil {
		t.Fatal(err)
	}
	m := tinyModel(t, nil)
	if err := m.ReleaseFloatWeights(graph.INT8); err != nil {
		t.Fatal(err)
	}
	for name, use := range map[string]func() error{
		"SaveModel": func() error {
			return checkpoint.SaveModel(filepath.Join(t.TempDir(), "out.safetensors"), m, checkpoint.ModelMeta{}, nil)
		},
		"LoadWeights": func() error { _, err := checkpoint.LoadWeights(m, f, checkpoint.LoadOptions{}); return err },
		"LoadEMA":     func() error { return checkpoint.LoadEMA(m, path, checkpoint.LoadOptions{}) },
	} {
		var re *layers.ReleasedError
		if err := use(); !errors.As(err, &re) {
			t.Errorf("%s on a released model: %v, want a *layers.ReleasedError", name, err)
		}
	}
}
