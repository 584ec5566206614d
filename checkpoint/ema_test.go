package checkpoint_test

import (
	"path/filepath"
	"slices"
	"testing"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/checkpoint"
	"github.com/vitgo/vit/checkpoint/safetensors"
	"github.com/vitgo/vit/layers"
)

// TestLoadEMAAtAnotherSize: a model loaded at another image size (eval
// -ema -img-size 56) takes the EMA weights with their pos_embed resampled
// as the plain weights' is: bit for bit the weights of a model file holding
// the EMA values, loaded at that size. It used to fail ("ema.pos_embed has
// 272 values").
func TestLoadEMAAtAnotherSize(t *testing.T) {
	m := tinyModel(t, nil)
	dir := t.TempDir()
	path := filepath.Join(dir, "last.safetensors")
	meta := checkpoint.ModelMeta{Model: m.Config, Dataset: "mnist", Weights: "raw"}
	if err := checkpoint.SaveModel(path, m, meta, nil); err != nil {
		t.Fatal(err)
	}
	// EMA weights unlike the plain ones, in the state file beside it.
	ema := map[string][]float32{}
	var ts []safetensors.Tensor
	for i, p := range m.Params {
		v := slices.Clone(p.Value.Data().([]float32))
		for j := range v {
			v[j] = v[j]*0.5 + float32(i+j%7)*1e-3
		}
		ema[p.Name] = v
		ts = append(ts, safetensors.Float32View("ema."+p.Name, []int{len(v)}, v)) // flat, as train's state file stores them
	}
	if err := safetensors.Write(checkpoint.StateFileFor(path), ts, map[string]string{"format": "test"}); err != nil {
		t.Fatal(err)
	}
	emaFile := filepath.Join(dir, "ema.safetensors")
	if err := checkpoint.SaveModel(emaFile, m, meta, ema); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		size   *layers.Size2
		interp string
	}{
		{"same size", nil, ""},
		{"56 bicubic", &layers.Size2{56, 56}, ""},
		{"56 bilinear", &layers.Size2{56, 56}, "bilinear"},
		{"14x21", &layers.Size2{14, 21}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, gotMeta, _, err := checkpoint.LoadModel(path, tensor.Float32, tc.size, tc.interp)
			if err != nil {
				t.Fatal(err)
			}
			gh, gw := gotMeta.Model.Grid()
			if err := checkpoint.LoadEMA(got, path, checkpoint.LoadOptions{Interp: tc.interp, OldGrid: [2]int{gh, gw}}); err != nil {
				t.Fatal(err)
			}
			want, _, _, err := checkpoint.LoadModel(emaFile, tensor.Float32, tc.size, tc.interp)
			if err != nil {
				t.Fatal(err)
			}
			for i, p := range got.Params {
				if !slices.Equal(p.Value.Data().([]float32), want.Params[i].Value.Data().([]float32)) {
					t.Errorf("%s differs from the EMA model file's loaded at this size", p.Name)
				}
			}
		})
	}
}
