package checkpoint_test

import (
	"errors"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/checkpoint"
	"github.com/vitgo/vit/checkpoint/safetensors"
	"github.com/vitgo/vit/layers"
)

// TestMetadataMustAgreeWithTensors: a model file whose metadata contradicts
// itself or its tensors is refused, naming the key, before anything is
// allocated from it: a class list that is not one name per head output
// (it used to load, the missing names filled with indexes), an img_size
// that the stored pos_embed does not have (it used to be resampled: a
// large claim took gigabytes), an embed_dim or num_classes other than
// the tensors'. The same file with its true metadata loads.
func TestMetadataMustAgreeWithTensors(t *testing.T) {
	m := tinyModel(t, nil)
	classes := []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"}
	meta := checkpoint.ModelMeta{Model: m.Config, Dataset: "mnist", Mean: []float64{0.1}, Std: []float64{0.3}, Classes: classes, Weights: "raw"}
	dir := t.TempDir()
	good := filepath.Join(dir, "m.safetensors")
	if err := checkpoint.SaveModel(good, m, meta, nil); err != nil {
		t.Fatal(err)
	}
	if _, got, _, err := checkpoint.LoadModel(good, tensor.Float32, nil, ""); err != nil || len(got.Classes) != 10 {
		t.Fatalf("the consistent file: %v (classes %v)", err, got.Classes)
	}
	f, err := safetensors.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ key, value string }{
		{"classes", `["zero","one","two"]`},
		{"classes", `["a","b","c","d","e","f","g","h","i","j","k"]`},
		{"img_size", "[1792,1792]"},
		{"img_size", "[56,56]"},
		{"embed_dim", "32"},
		{"num_classes", "4"}, // with no class list: the head says 10
		{"mean", "[0.1,0.2,0.3]"},
		{"std", "[1e39]"},
		{"std", "[1e-40]"},  // a float32 subnormal: inputs divided by it overflow
		{"std", "[1e-300]"}, // 0 in float32
		{"mean", "[3e38]"},  // finite in float32, but (x − mean)/std is not
	} {
		bad := map[string]string{}
		for k, v := range f.Metadata {
			bad[k] = v
		}
		bad[tc.key] = tc.value
		if tc.key == "num_classes" {
			delete(bad, "classes")
		}
		path := filepath.Join(dir, "bad.safetensors")
		if err := safetensors.Write(path, f.Tensors, bad); err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, _, _, err := checkpoint.LoadModel(path, tensor.Float32, nil, "")
		runtime.ReadMemStats(&after)
		var me *checkpoint.MetadataError
		if !errors.As(err, &me) || me.Key != tc.key {
			t.Errorf("%s=%s: %v, want a *MetadataError for %s", tc.key, tc.value, err, tc.key)
		}
		if d := after.TotalAlloc - before.TotalAlloc; d > 32<<20 {
			t.Errorf("%s=%s: %d MiB allocated before the refusal", tc.key, tc.value, d>>20)
		}
	}
	// Evaluating at another size still resamples from the true grid.
	at := layers.Size2{56, 56}
	if _, _, notes, err := checkpoint.LoadModel(good, tensor.Float32, &at, ""); err != nil || len(notes) != 1 {
		t.Fatalf("at 56×56: %v, notes %v", err, notes)
	}
}

// TestInChansLieIsNamed: a model file whose metadata gives in_chans 1 while
// patch_embed.proj.weight has 3 input channels (or the reverse) is refused
// as an in_chans mismatch naming the file, the metadata's value and the
// tensor's shape, not as a patch_size one.
func TestInChansLieIsNamed(t *testing.T) {
	for _, tc := range []struct {
		name        string
		true, claim int
		wantShape   string
	}{
		{"claims 1, stores 3", 3, 1, "[16 3 7 7]"},
		{"claims 3, stores 1", 1, 3, "[16 1 7 7]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := tinyModel(t, func(c *layers.Config) { c.InChans = tc.true })
			meta := checkpoint.ModelMeta{Model: m.Config, Dataset: "mnist", Weights: "raw"}
			dir := t.TempDir()
			good := filepath.Join(dir, "m.safetensors")
			if err := checkpoint.SaveModel(good, m, meta, nil); err != nil {
				t.Fatal(err)
			}
			f, err := safetensors.ReadFile(good)
			if err != nil {
				t.Fatal(err)
			}
			bad := map[string]string{}
			for k, v := range f.Metadata {
				bad[k] = v
			}
			bad["in_chans"] = strconv.Itoa(tc.claim)
			path := filepath.Join(dir, "lie.safetensors")
			if err := safetensors.Write(path, f.Tensors, bad); err != nil {
				t.Fatal(err)
			}
			_, _, _, err = checkpoint.LoadModel(path, tensor.Float32, nil, "")
			var me *checkpoint.MetadataError
			if !errors.As(err, &me) || me.Key != "in_chans" {
				t.Fatalf("%v, want a *MetadataError for in_chans", err)
			}
			for _, want := range []string{path, "in_chans " + strconv.Itoa(tc.claim), tc.wantShape} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%q does not name %q", err, want)
				}
			}
		})
	}
}

// TestDuplicateClassesInMetadata: a model file whose class list names one
// class twice (or twice but for case) is refused with a *MetadataError for
// classes naming the file and the name: two head outputs would carry one
// label.
func TestDuplicateClassesInMetadata(t *testing.T) {
	m := tinyModel(t, nil)
	dir := t.TempDir()
	good := filepath.Join(dir, "m.safetensors")
	if err := checkpoint.SaveModel(good, m, checkpoint.ModelMeta{Model: m.Config, Weights: "raw"}, nil); err != nil {
		t.Fatal(err)
	}
	f, err := safetensors.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ list, name string }{
		{`["zero","one","two","three","four","five","six","seven","eight","one"]`, "one"},
		{`["zero","one","two","three","four","five","six","seven","eight","Zero"]`, "Zero"},
		{`["zero","one","two","three","four","five","","","",""]`, ""},
	} {
		md := map[string]string{}
		for k, v := range f.Metadata {
			md[k] = v
		}
		md["classes"] = tc.list
		path := filepath.Join(dir, "dup.safetensors")
		if err := safetensors.Write(path, f.Tensors, md); err != nil {
			t.Fatal(err)
		}
		_, _, _, err := checkpoint.LoadModel(path, tensor.Float32, nil, "")
		if tc.name == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.list, err)
			}
			continue
		}
		var me *checkpoint.MetadataError
		if !errors.As(err, &me) || me.Key != "classes" || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), strconv.Quote(tc.name)) {
			t.Errorf("%s: %v, want a *MetadataError for classes naming %s and %q", tc.list, err, path, tc.name)
		}
	}
}
