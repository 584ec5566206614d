package train

import (
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/checkpoint/safetensors"
	"github.com/vitgo/vit/layers"
)

func tinyModel(t *testing.T, edit func(*layers.Config)) *layers.VisionTransformer {
	t.Helper()
	c := tinyRun(t).Model
	c.ZeroInitHead.Set(false)
	if edit != nil {
		edit(&c)
	}
	m, err := layers.New(c, tensor.Float32, 3)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func logitsOf(t *testing.T, m *layers.VisionTransformer) []float32 {
	t.Helper()
	ev, err := NewEvaluator(m, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	c := m.Config
	x := make([]float32, 2*c.InChans*c.ImgSize[0]*c.ImgSize[1])
	for i := range x {
		x[i] = float32(math.Sin(float64(i) * 0.1))
	}
	l, err := ev.Logits(x, 2)
	if err != nil {
		t.Fatal(err)
	}
	return append([]float32(nil), l...)
}

func TestModelRoundTrip(t *testing.T) {
	m := tinyModel(t, nil)
	path := filepath.Join(t.TempDir(), "m.safetensors")
	meta := ModelMeta{Dataset: "mnist", Mean: []float64{0.1307}, Std: []float64{0.3081}, Classes: []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}, Epoch: 3, Step: 99, Weights: "raw"}
	if err := SaveModel(path, m, meta, nil); err != nil {
		t.Fatal(err)
	}
	back, meta2, notes, err := LoadModel(path, tensor.Float32, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 0 {
		t.Errorf("unexpected notes %v", notes)
	}
	meta.Model = m.Config
	if !reflect.DeepEqual(meta, meta2) {
		t.Errorf("metadata round trip:\n got %+v\nwant %+v", meta2, meta)
	}
	for i, p := range m.Params {
		a, b := p.Value.Data().([]float32), back.Params[i].Value.Data().([]float32)
		for j := range a {
			if math.Float32bits(a[j]) != math.Float32bits(b[j]) {
				t.Fatalf("%s[%d]: %v != %v", p.Name, j, a[j], b[j])
			}
		}
	}
	if !reflect.DeepEqual(logitsOf(t, m), logitsOf(t, back)) {
		t.Fatal("logits differ after a round trip")
	}
	// The file holds exactly the model's tensors under timm's names.
	f, err := safetensors.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Tensors) != len(m.Params) {
		t.Fatalf("%d tensors in the file, model has %d", len(f.Tensors), len(m.Params))
	}
	if md := f.Metadata; md["img_size"] != "28" || md["patch_size"] != "7" || md["readout"] != `"cls"` || md["format"] != FormatVersion {
		t.Errorf("metadata %v", md)
	}
}

func TestLoadWeightsErrorsListEverything(t *testing.T) {
	m := tinyModel(t, nil)
	var ts []safetensors.Tensor
	for _, p := range m.Params {
		switch p.Name {
		case "norm.bias": // missing
		case "blocks.0.mlp.fc1.weight": // wrong shape
			ts = append(ts, safetensors.FromFloat32(p.Name, []int{3, 4}, make([]float32, 12)))
		default:
			ts = append(ts, safetensors.FromFloat32(p.Name, p.Shape, p.Value.Data().([]float32)))
		}
	}
	ts = append(ts, safetensors.FromFloat32("fc_norm.weight", []int{16}, make([]float32, 16)))
	path := filepath.Join(t.TempDir(), "bad.safetensors")
	if err := safetensors.Write(path, ts, nil); err != nil {
		t.Fatal(err)
	}
	f, err := safetensors.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = LoadWeights(m, f, LoadOptions{})
	if err == nil {
		t.Fatal("want an error")
	}
	for _, want := range []string{"missing norm.bias [16]", "shape mismatch blocks.0.mlp.fc1.weight: model [32 16], file [3 4]", "unexpected fc_norm.weight"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestLoadAtHigherResolution(t *testing.T) {
	m := tinyModel(t, nil)
	path := filepath.Join(t.TempDir(), "m.safetensors")
	if err := SaveModel(path, m, ModelMeta{Weights: "raw"}, nil); err != nil {
		t.Fatal(err)
	}
	size := layers.Size2{56, 42}
	big, _, notes, err := LoadModel(path, tensor.Float32, &size, "bicubic")
	if err != nil {
		t.Fatal(err)
	}
	pe := big.Param("pos_embed")
	if !pe.Shape.Eq(tensor.Shape{1, 8*6 + 1, 16}) {
		t.Fatalf("pos_embed %v, want (1, 49, 16)", pe.Shape)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "4x4 → 8x6") {
		t.Errorf("notes %v", notes)
	}
	old, now := m.Param("pos_embed").Value.Data().([]float32)[:16], pe.Value.Data().([]float32)[:16]
	for i := range old {
		if math.Float32bits(old[i]) != math.Float32bits(now[i]) {
			t.Fatalf("CLS row changed at %d", i)
		}
	}
	if len(logitsOf(t, big)) != 2*10 {
		t.Fatal("the resampled model does not run")
	}
}

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
	if err := SaveModel(path, m, ModelMeta{Weights: "raw"}, nil); err != nil {
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
