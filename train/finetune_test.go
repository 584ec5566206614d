package train

import (
	"errors"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/vitgo/vit/checkpoint"
	"github.com/vitgo/vit/checkpoint/safetensors"
	"github.com/vitgo/vit/layers"
)

func TestInitFromTimmStateDict(t *testing.T) {
	// A plain timm state_dict: no metadata of ours, float64 and bfloat16-free
	// F64 tensors, 1000 classes; the config asks for 10 classes at 56×56.
	src := tinyModel(t, func(c *layers.Config) { c.NumClasses = 1000 })
	var ts []safetensors.Tensor
	for _, p := range src.Params {
		v := p.Value.Data().([]float32)
		t64 := safetensors.FromFloat32(p.Name, p.Shape, v)
		ts = append(ts, toF64(t64, v))
	}
	path := filepath.Join(t.TempDir(), "timm.safetensors")
	if err := safetensors.Write(path, ts, map[string]string{"format": ""}); err != nil {
		t.Fatal(err)
	}
	dst := tinyModel(t, func(c *layers.Config) { c.ImgSize = layers.Size2{56, 56} })
	notes, err := InitFrom(dst, FinetuneConfig{InitFrom: path, Interp: "bicubic"})
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(notes, "; ")
	if !strings.Contains(joined, "head re-initialised") || !strings.Contains(joined, "4x4 → 8x8") {
		t.Errorf("notes %q", joined)
	}
	if w := dst.Param("head.weight").Value.Data().([]float32); w[0] != 0 || w[len(w)-1] != 0 {
		t.Error("head not zero-initialised")
	}
	a, b := src.Param("blocks.1.attn.qkv.weight").Value.Data().([]float32), dst.Param("blocks.1.attn.qkv.weight").Value.Data().([]float32)
	if !reflect.DeepEqual(a, b) {
		t.Error("qkv weights not copied")
	}
}

func toF64(t safetensors.Tensor, v []float32) safetensors.Tensor {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		u := math.Float64bits(float64(x))
		for k := 0; k < 8; k++ {
			b[8*i+k] = byte(u >> (8 * k))
		}
	}
	t.DType, t.Data = safetensors.F64, b
	return t
}

func TestInitFromErrors(t *testing.T) {
	m := tinyModel(t, nil)
	dir := t.TempDir()
	path := filepath.Join(dir, "m.safetensors")
	if err := checkpoint.SaveModel(path, m, checkpoint.ModelMeta{Weights: "raw"}, nil); err != nil {
		t.Fatal(err)
	}
	p14 := tinyModel(t, func(c *layers.Config) { c.PatchSize = 14 })
	if _, err := InitFrom(p14, FinetuneConfig{InitFrom: path}); err == nil || !strings.Contains(err.Error(), "patch_size 7 in the file, 14 in the config") {
		t.Errorf("patch mismatch: %v", err)
	}
	deep := tinyModel(t, func(c *layers.Config) { c.Depth = 3 })
	if _, err := InitFrom(deep, FinetuneConfig{InitFrom: path}); err == nil || !strings.Contains(err.Error(), "depth 2 in the file, 3 in the config") {
		t.Errorf("depth mismatch: %v", err)
	}
	if _, err := InitFrom(m, FinetuneConfig{InitFrom: filepath.Join(dir, "nope.safetensors")}); err == nil || !strings.Contains(err.Error(), "finetune.init_from") || !strings.Contains(err.Error(), "nope.safetensors") {
		t.Errorf("missing file: %v", err)
	}
}

// TestInitFromRefusesDType: a state_dict with a weight in a dtype that is
// not converted is refused with a *checkpoint.DTypeError, and the error
// names the file and the tensor.
func TestInitFromRefusesDType(t *testing.T) {
	m := tinyModel(t, nil)
	var ts []safetensors.Tensor
	for _, p := range m.Params {
		if p.Name == "head.bias" {
			ts = append(ts, safetensors.Tensor{Name: p.Name, DType: safetensors.I32, Shape: []int(p.Shape), Data: make([]byte, 4*p.Shape.TotalSize())})
			continue
		}
		ts = append(ts, safetensors.FromFloat32(p.Name, p.Shape, p.Value.Data().([]float32)))
	}
	path := filepath.Join(t.TempDir(), "ints.safetensors")
	if err := safetensors.Write(path, ts, nil); err != nil {
		t.Fatal(err)
	}
	_, err := InitFrom(tinyModel(t, nil), FinetuneConfig{InitFrom: path})
	var de *checkpoint.DTypeError
	if !errors.As(err, &de) || de.Tensor != "head.bias" || de.DType != safetensors.I32 || !strings.Contains(err.Error(), path) {
		t.Fatalf("got %v, want a *checkpoint.DTypeError for head.bias naming %s", err, path)
	}
}
