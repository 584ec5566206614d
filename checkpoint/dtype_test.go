package checkpoint_test

import (
	"encoding/binary"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vitgo/vit/checkpoint"
	"github.com/vitgo/vit/checkpoint/safetensors"
	"github.com/vitgo/vit/layers"
)

func readTestdata(t *testing.T, name string) *safetensors.File {
	t.Helper()
	f, err := safetensors.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// tinyHalfConfig is the model of testdata/tiny_*.safetensors
// (experiments/goldens/safetensors_golden.py --models).
func tinyHalfConfig(c *layers.Config) {
	c.ImgSize, c.PatchSize, c.InChans = layers.Size2{8, 8}, 4, 1
	c.EmbedDim, c.Depth, c.NumHeads, c.MLPRatio, c.NumClasses = 8, 1, 2, 2, 3
}

// TestLoadHalfPrecision loads a timm state_dict that torch wrote as float16
// and as bfloat16 (subnormals, ±0, ±Inf and NaN among the values) and
// compares every weight with torch's own .float() of the tensor, bit for
// bit.
func TestLoadHalfPrecision(t *testing.T) {
	want := readTestdata(t, "tiny_expected.safetensors")
	for _, tag := range []string{"f16", "bf16"} {
		m := tinyModel(t, tinyHalfConfig)
		notes, err := checkpoint.LoadWeights(m, readTestdata(t, "tiny_"+tag+".safetensors"), checkpoint.LoadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", tag, err)
		}
		if len(notes) != 1 || !strings.Contains(notes[0], "converted from "+strings.ToUpper(tag)) {
			t.Errorf("%s: notes %q", tag, notes)
		}
		for _, p := range m.Params {
			w, ok := want.Get(tag + "." + p.Name)
			if !ok {
				t.Fatalf("expected file lacks %s.%s", tag, p.Name)
			}
			wv, err := w.Float32()
			if err != nil {
				t.Fatal(err)
			}
			got := p.Value.Data().([]float32)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(wv[i]) {
					t.Fatalf("%s %s[%d] = %v (%#08x), torch %v (%#08x)", tag, p.Name, i, got[i], math.Float32bits(got[i]), wv[i], math.Float32bits(wv[i]))
				}
			}
		}
	}
}

// TestFloat16AgainstTorch converts every F16 bit pattern and compares it
// with torch's conversion of the same pattern, bit for bit (NaN payloads
// included).
func TestFloat16AgainstTorch(t *testing.T) {
	f := readTestdata(t, "f16_all.safetensors")
	half, _ := f.Get("half")
	want, _ := f.Get("float")
	if half.DType != safetensors.F16 || len(half.Data) != 2<<16 {
		t.Fatalf("half: %s with %d bytes", half.DType, len(half.Data))
	}
	got, err := half.Float32()
	if err != nil {
		t.Fatal(err)
	}
	wv, err := want.Float32()
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(wv[i]) {
			t.Fatalf("F16 %#04x: %#08x, torch %#08x", binary.LittleEndian.Uint16(half.Data[2*i:]), math.Float32bits(got[i]), math.Float32bits(wv[i]))
		}
	}
}

// TestLoadRefusesDTypes: a weight in a dtype that is not converted, or an
// F64 weight beyond float32's range, is a *DTypeError naming the tensor
// and the dtype, and finetune's and LoadModel's wrapping name the file; a
// finite F64 weight is rounded to nearest.
func TestLoadRefusesDTypes(t *testing.T) {
	m := tinyModel(t, tinyHalfConfig)
	f := readTestdata(t, "tiny_f16.safetensors")
	set := func(name string, dt safetensors.DType, data []byte) *safetensors.File {
		g := &safetensors.File{Metadata: f.Metadata}
		for _, tt := range f.Tensors {
			if tt.Name == name {
				tt.DType, tt.Data = dt, data
			}
			g.Tensors = append(g.Tensors, tt)
		}
		return g
	}
	f64 := func(v ...float64) []byte {
		b := make([]byte, 8*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
		}
		return b
	}
	for _, tc := range []struct {
		file *safetensors.File
		dt   safetensors.DType
	}{
		{set("head.bias", safetensors.I16, make([]byte, 6)), safetensors.I16},
		{set("norm.bias", safetensors.F8E4M3, make([]byte, 8)), safetensors.F8E4M3},
		{set("head.bias", safetensors.F64, f64(1, 1e39, 0)), safetensors.F64},
	} {
		_, err := checkpoint.LoadWeights(m, tc.file, checkpoint.LoadOptions{})
		var de *checkpoint.DTypeError
		if !errors.As(err, &de) || de.DType != tc.dt {
			t.Errorf("%s: %v, want a *DTypeError", tc.dt, err)
		}
	}
	// Finite F64 is rounded to nearest (ties to even).
	third := 1.0 / 3
	if _, err := checkpoint.LoadWeights(m, set("head.bias", safetensors.F64, f64(third, -1e-46, 1+0x1p-24)), checkpoint.LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, want := m.Param("head.bias").Value.Data().([]float32), []float32{float32(third), -0, 1}; got[0] != want[0] || got[1] != 0 || !math.Signbit(float64(got[1])) || got[2] != 1 {
		t.Errorf("F64 head.bias loaded as %v, want %v", got, want)
	}
}
