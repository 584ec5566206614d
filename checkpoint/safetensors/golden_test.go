package safetensors

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"math"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// testdata/golden.safetensors and golden.json are written by
// experiments/goldens/safetensors_golden.py with torch, in the reference
// library's layout (metadata first, tensors by element size then name).
type goldenTensor struct {
	DType   DType    `json:"dtype"`
	Shape   []int    `json:"shape"`
	Hex     string   `json:"hex"`
	F32Bits []uint32 `json:"f32_bits"` // torch's .float(), nil for non-float dtypes
}

type goldenFile struct {
	Torch    string                  `json:"torch"`
	Metadata map[string]string       `json:"metadata"`
	Tensors  map[string]goldenTensor `json:"tensors"`
}

func loadGolden(t *testing.T) goldenFile {
	t.Helper()
	raw, err := os.ReadFile("testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g goldenFile
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatalf("testdata/golden.json: %v", err)
	}
	if len(g.Tensors) == 0 {
		t.Fatal("testdata/golden.json has no tensors")
	}
	return g
}

func TestReadPythonGolden(t *testing.T) {
	g := loadGolden(t)
	f, err := ReadFile("testdata/golden.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f.Metadata, g.Metadata) {
		t.Errorf("metadata %q, want %q", f.Metadata, g.Metadata)
	}
	names := f.Names()
	if len(names) != len(g.Tensors) {
		t.Fatalf("names %q, want %d tensors", names, len(g.Tensors))
	}
	for _, name := range names {
		want, ok := g.Tensors[name]
		if !ok {
			t.Fatalf("unexpected tensor %q", name)
		}
		got, _ := f.Get(name)
		if got.DType != want.DType || !reflect.DeepEqual(got.Shape, want.Shape) {
			t.Errorf("%s: %s %v, want %s %v", name, got.DType, got.Shape, want.DType, want.Shape)
		}
		if h := hex.EncodeToString(got.Data); h != want.Hex {
			t.Errorf("%s: bytes %s, want %s", name, h, want.Hex)
		}
		vals, err := got.Float32()
		if want.F32Bits == nil {
			if err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("%s: Float32 on %s: err %v, want an error naming the tensor", name, got.DType, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(vals) != len(want.F32Bits) {
			t.Fatalf("%s: %d values, want %d", name, len(vals), len(want.F32Bits))
		}
		for i, v := range vals {
			if math.Float32bits(v) != want.F32Bits[i] {
				t.Errorf("%s[%d]: %v (%#08x), torch %s .float() gives %v (%#08x)", name, i, v, math.Float32bits(v),
					g.Torch, math.Float32frombits(want.F32Bits[i]), want.F32Bits[i])
			}
		}
	}
	// Data-section order is the order of the offsets in the file.
	if names[0] != "double" || names[len(names)-1] != "flags" {
		t.Errorf("names not in data order: %q", names)
	}
}

// TestEncodeGoldenLayout: our writer's header for the golden tensors has the
// documented form: metadata first, tensors sorted by name, 8-byte padding.
func TestEncodeGoldenLayout(t *testing.T) {
	f, err := ReadFile("testdata/golden.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := Encode(&b, f.Tensors, f.Metadata); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	n := int(binary.LittleEndian.Uint64([]byte(out[:8])))
	if n%8 != 0 {
		t.Fatalf("header length %d not a multiple of 8", n)
	}
	header := out[8 : 8+n]
	if !strings.HasPrefix(header, `{"__metadata__":{"format":"pt","note":`) {
		t.Errorf("header starts %q", header[:60])
	}
	var pos []int
	names := f.Names()
	sort.Strings(names)
	for _, name := range names {
		pos = append(pos, strings.Index(header, `"`+name+`":{"dtype"`))
	}
	if !sort.IntsAreSorted(pos) || pos[0] < 0 {
		t.Errorf("tensors not sorted by name in the header: %s", header)
	}
	if trimmed := strings.TrimRight(header, " "); len(header)-len(trimmed) >= 8 || !strings.HasSuffix(trimmed, "}") {
		t.Errorf("bad padding: %q", header[len(trimmed)-2:])
	}
}

var pythonOut = flag.String("python-out", "", "write the golden tensors with Write to this path, for safetensors_golden.py --check")

// TestWriteForPython writes the golden tensors with our writer when
// -python-out is given; experiments/goldens/safetensors_golden.py --check
// then reads that file back in Python.
func TestWriteForPython(t *testing.T) {
	if *pythonOut == "" {
		t.Skip("set -python-out to write a file for safetensors_golden.py --check")
	}
	f, err := ReadFile("testdata/golden.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(*pythonOut, f.Tensors, f.Metadata); err != nil {
		t.Fatal(err)
	}
}
