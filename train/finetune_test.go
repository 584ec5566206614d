package train

import (
	"errors"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/checkpoint"
	"github.com/vitgo/vit/checkpoint/safetensors"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/layers/posembed"
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

// TestInitFromTimmDeiT: real timm's VisionTransformerDistilled state_dict
// (train/testdata/deit_timm.safetensors, no metadata of ours) loads through
// finetune.init_from; at another size its position table keeps both prefix
// rows (class and distillation token) bit for bit and resamples the grid
// alone, as timm's resample_abs_pos_embed with num_prefix_tokens=2; with
// other classes both heads start at zero.
func TestInitFromTimmDeiT(t *testing.T) {
	const path = "testdata/deit_timm.safetensors"
	f, err := safetensors.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	file := func(name string) []float32 {
		ts, _ := f.Get(name)
		v, err := ts.Float32()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	same, err := layers.New(deitGoldenConfig(), tensor.Float32, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := InitFrom(same, FinetuneConfig{InitFrom: path}); err != nil {
		t.Fatal(err)
	}
	for _, p := range same.Params {
		if !reflect.DeepEqual(p.Value.Data().([]float32), file(p.Name)) {
			t.Errorf("%s not copied", p.Name)
		}
	}

	c := deitGoldenConfig()
	c.ImgSize, c.NumClasses = layers.Size2{12, 12}, 5
	big, err := layers.New(c, tensor.Float32, 0)
	if err != nil {
		t.Fatal(err)
	}
	notes, err := InitFrom(big, FinetuneConfig{InitFrom: path, Interp: InterpBicubic})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(notes, "; "), "2x2 → 3x3") {
		t.Errorf("notes %q", notes)
	}
	want, err := posembed.Resample(file("pos_embed"), 8, 2, 2, 2, 3, 3, posembed.Options{Mode: posembed.Bicubic})
	if err != nil {
		t.Fatal(err)
	}
	got := big.Param("pos_embed").Value.Data().([]float32)
	if !reflect.DeepEqual(got[:16], file("pos_embed")[:16]) {
		t.Error("the class and distillation rows of pos_embed changed")
	}
	if !reflect.DeepEqual(got, want) {
		t.Error("pos_embed is not the grid resampled with two prefix rows")
	}
	for _, name := range []string{"head.weight", "head.bias", "head_dist.weight", "head_dist.bias"} {
		for _, v := range big.Param(name).Value.Data().([]float32) {
			if v != 0 {
				t.Fatalf("%s not reset to zero for 5 classes", name)
			}
		}
	}
}
