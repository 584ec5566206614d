package checkpoint_test

import (
	"errors"
	"math"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/checkpoint"
	"github.com/vitgo/vit/checkpoint/safetensors"
	"github.com/vitgo/vit/evaluate"
	"github.com/vitgo/vit/internal/cfgerr"
	"github.com/vitgo/vit/layers"
)

func tinyModel(t *testing.T, edit func(*layers.Config)) *layers.VisionTransformer {
	t.Helper()
	c := layers.DefaultConfig()
	c.ImgSize, c.PatchSize, c.InChans = layers.Size2{28, 28}, 7, 1
	c.EmbedDim, c.Depth, c.NumHeads, c.MLPRatio, c.NumClasses = 16, 2, 2, 2, 10
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
	ev, err := evaluate.New(m, 2)
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
	meta := checkpoint.ModelMeta{Dataset: "mnist", Mean: []float64{0.1307}, Std: []float64{0.3081}, Classes: []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}, Epoch: 3, Step: 99, Weights: "raw"}
	if err := checkpoint.SaveModel(path, m, meta, nil); err != nil {
		t.Fatal(err)
	}
	back, meta2, notes, err := checkpoint.LoadModel(path, tensor.Float32, nil, "")
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
	if md := f.Metadata; md["img_size"] != "28" || md["patch_size"] != "7" || md["readout"] != `"cls"` || md["format"] != checkpoint.FormatVersion {
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
	_, err = checkpoint.LoadWeights(m, f, checkpoint.LoadOptions{})
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
	if err := checkpoint.SaveModel(path, m, checkpoint.ModelMeta{Weights: "raw"}, nil); err != nil {
		t.Fatal(err)
	}
	size := layers.Size2{56, 42}
	big, _, notes, err := checkpoint.LoadModel(path, tensor.Float32, &size, "bicubic")
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

// TestCheckpointMetadataValidatedBeforeAllocating: an 800 KB file whose
// metadata claims embed_dim 2³⁰ is refused from its metadata, naming the
// key, before any model is allocated (allocating it would crash the runtime).
func TestCheckpointMetadataValidatedBeforeAllocating(t *testing.T) {
	m := tinyModel(t, nil)
	meta := checkpoint.ModelMeta{Model: m.Config, Dataset: "mnist", Weights: "raw"}
	dir := t.TempDir()
	if err := checkpoint.SaveModel(filepath.Join(dir, "m.safetensors"), m, meta, nil); err != nil {
		t.Fatal(err)
	}
	md, err := safetensors.ReadMetadata(filepath.Join(dir, "m.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ key, value string }{
		{"embed_dim", "1073741824"},
		{"depth", "1000000"},
		{"img_size", "100000"},
		{"mlp_ratio", "1e12"},
		{"ln_eps", ".inf"},
		{"patch_size", `"sixteen"`},
		{"num_classes", "1e9"},
	} {
		bad := map[string]string{}
		for k, v := range md {
			bad[k] = v
		}
		bad[tc.key] = tc.value
		path := filepath.Join(dir, tc.key+".safetensors")
		pad := safetensors.FromFloat32("pad", []int{200_000}, make([]float32, 200_000)) // 800 KB
		if err := safetensors.Write(path, []safetensors.Tensor{pad}, bad); err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, _, _, err := checkpoint.LoadModel(path, m.Params[0].Value.Dtype(), nil, "")
		runtime.ReadMemStats(&after)
		var ce *cfgerr.Error
		if !errors.As(err, &ce) || ce.Key != "model."+tc.key || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: %v, want a ConfigError for model.%s naming the file", tc.key, err, tc.key)
		}
		if d := after.TotalAlloc - before.TotalAlloc; d > 32<<20 {
			t.Errorf("%s: %d MiB allocated before the refusal", tc.key, d>>20)
		}
	}
	// cmd/eval's -img-size: the override is validated too.
	path := filepath.Join(dir, "ok.safetensors")
	if err := checkpoint.SaveModel(path, m, meta, nil); err != nil {
		t.Fatal(err)
	}
	big := layers.Size2{100000, 100000}
	_, _, _, err = checkpoint.LoadModel(path, m.Params[0].Value.Dtype(), &big, "")
	var ce *cfgerr.Error
	if !errors.As(err, &ce) || ce.Key != "model.img_size" {
		t.Errorf("-img-size 100000: %v, want a ConfigError for model.img_size", err)
	}
}

// TestDistilledRoundTrip: a distilled (DeiT) model file names itself in its
// metadata and loads back distilled, every tensor as it was, also at a
// higher resolution with both prefix rows of pos_embed kept; other models'
// metadata has no distilled key.
func TestDistilledRoundTrip(t *testing.T) {
	dir := t.TempDir()
	m := tinyModel(t, func(c *layers.Config) { c.Distilled = true })
	path := filepath.Join(dir, "deit.safetensors")
	if err := checkpoint.SaveModel(path, m, checkpoint.ModelMeta{Weights: "raw"}, nil); err != nil {
		t.Fatal(err)
	}
	back, _, _, err := checkpoint.LoadModel(path, tensor.Float32, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if !back.Config.Distilled || len(back.Params) != len(m.Params) {
		t.Fatalf("loaded distilled %v with %d tensors, saved %d", back.Config.Distilled, len(back.Params), len(m.Params))
	}
	for i, p := range m.Params {
		if !reflect.DeepEqual(p.Value.Data(), back.Params[i].Value.Data()) {
			t.Errorf("%s changed", p.Name)
		}
	}
	size := layers.Size2{56, 56}
	big, _, _, err := checkpoint.LoadModel(path, tensor.Float32, &size, "bicubic")
	if err != nil {
		t.Fatal(err)
	}
	if pe := big.Param("pos_embed"); !pe.Shape.Eq(tensor.Shape{1, 2 + 8*8, 16}) ||
		!reflect.DeepEqual(pe.Value.Data().([]float32)[:32], m.Param("pos_embed").Value.Data().([]float32)[:32]) {
		t.Errorf("pos_embed at 56×56: %v, or its two prefix rows changed", pe.Shape)
	}
	plain := filepath.Join(dir, "vit.safetensors")
	if err := checkpoint.SaveModel(plain, tinyModel(t, nil), checkpoint.ModelMeta{Weights: "raw"}, nil); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]bool{path: true, plain: false} {
		md, err := safetensors.ReadMetadata(file)
		if err != nil {
			t.Fatal(err)
		}
		if _, has := md["distilled"]; has != want {
			t.Errorf("%s: metadata %v", file, md)
		}
	}
}
