package safetensors

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// randomTensors returns one tensor of every dtype with random bytes, plus a
// scalar and an empty tensor, named so that name order ≠ slice order.
func randomTensors(seed uint64) []Tensor {
	r := rand.New(rand.NewPCG(seed, 2))
	dtypes := []DType{F64, F32, F16, BF16, F8E4M3, F8E5M2, I64, I32, I16, I8, U64, U32, U16, U8, Bool}
	var ts []Tensor
	for i, d := range dtypes {
		shape := []int{1 + r.IntN(3), 1 + r.IntN(4)}
		data := make([]byte, shape[0]*shape[1]*d.Size())
		for k := range data {
			data[k] = byte(r.Uint32())
		}
		ts = append(ts, Tensor{Name: string(rune('z'-i)) + ".w", DType: d, Shape: shape, Data: data})
	}
	ts = append(ts,
		FromFloat32("scalar", nil, []float32{3.5}),
		FromFloat32("empty", []int{4, 0}, nil),
	)
	return ts
}

func TestRoundTripBitwise(t *testing.T) {
	in := randomTensors(1)
	meta := map[string]string{"step": "1200", "config": "model:\n  depth: 4\n", "": "empty key"}
	path := filepath.Join(t.TempDir(), "ckpt.safetensors")
	if err := Write(path, in, meta); err != nil {
		t.Fatal(err)
	}
	f, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f.Metadata, meta) {
		t.Errorf("metadata %q, want %q", f.Metadata, meta)
	}
	if len(f.Tensors) != len(in) {
		t.Fatalf("%d tensors, want %d", len(f.Tensors), len(in))
	}
	for _, want := range in {
		got, ok := f.Get(want.Name)
		if !ok {
			t.Fatalf("tensor %q missing", want.Name)
		}
		wantShape := want.Shape
		if wantShape == nil {
			wantShape = []int{}
		}
		if got.DType != want.DType || !reflect.DeepEqual(got.Shape, wantShape) || !bytes.Equal(got.Data, want.Data) {
			t.Errorf("%s: got %s %v %x, want %s %v %x", want.Name, got.DType, got.Shape, got.Data, want.DType, wantShape, want.Data)
		}
	}
	// The data section follows the header in name order, 8-byte aligned.
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := binary.LittleEndian.Uint64(raw)
	if (8+n)%8 != 0 {
		t.Errorf("data section starts at %d, not 8-byte aligned", 8+n)
	}
	names := f.Names()
	for i := 1; i < len(names); i++ {
		if names[i-1] > names[i] {
			t.Fatalf("data order %q is not name order", names)
		}
	}
	// Encode produces the same bytes as Write.
	var b bytes.Buffer
	if err := Encode(&b, in, meta); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), raw) {
		t.Error("Encode and Write produce different bytes")
	}
	if _, ok := f.Get("absent"); ok {
		t.Error(`Get("absent") found a tensor`)
	}
}

func TestRoundTripFloat32(t *testing.T) {
	v := []float32{0, -0.0, 1.5, -3.25e-39, 3.4e38, float32(1) / 3}
	var b bytes.Buffer
	if err := Encode(&b, []Tensor{FromFloat32("w", []int{2, 3}, v)}, nil); err != nil {
		t.Fatal(err)
	}
	f, err := Decode(bytes.NewReader(b.Bytes()), int64(b.Len()), "mem")
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.Tensors[0].Float32()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, v) || len(f.Metadata) != 0 {
		t.Fatalf("got %v %v, want %v and no metadata", got, f.Metadata, v)
	}
	if !bytes.Contains(b.Bytes(), []byte(`{"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}}`)) {
		t.Errorf("header %q", b.Bytes()[8:b.Len()-24])
	}
}

func TestEncodeRejects(t *testing.T) {
	good := FromFloat32("a", []int{2}, []float32{1, 2})
	tests := []struct {
		name    string
		tensors []Tensor
		meta    map[string]string
		want    string
	}{
		{"short data", []Tensor{FromFloat32("w", []int{3}, []float32{1, 2})}, nil, `tensor "w": shape [3] with dtype F32 needs 12 bytes, has 8`},
		{"negative dim", []Tensor{{Name: "w", DType: F32, Shape: []int{-1}}}, nil, `tensor "w": shape [-1] has a negative dim`},
		{"unknown dtype", []Tensor{{Name: "w", DType: "F128", Shape: []int{1}, Data: make([]byte, 16)}}, nil, `tensor "w": unknown dtype "F128"`},
		{"duplicate", []Tensor{good, good}, nil, `tensor "a": duplicate name`},
		{"empty name", []Tensor{{DType: U8, Shape: []int{}, Data: []byte{1}}}, nil, "empty name"},
		{"reserved name", []Tensor{{Name: "__metadata__", DType: U8, Shape: []int{}, Data: []byte{1}}}, nil, "reserved"},
		{"bad utf8 name", []Tensor{{Name: "w\xff", DType: U8, Shape: []int{}, Data: []byte{1}}}, nil, "UTF-8"},
		{"bad utf8 metadata", []Tensor{good}, map[string]string{"k": "\xff"}, "UTF-8"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			err := Encode(&b, tc.tensors, tc.meta)
			if err == nil || !bytes.Contains([]byte(err.Error()), []byte(tc.want)) {
				t.Fatalf("err %v, want one containing %q", err, tc.want)
			}
			if b.Len() != 0 {
				t.Fatalf("wrote %d bytes before failing", b.Len())
			}
		})
	}
}
