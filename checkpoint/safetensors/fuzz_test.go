package safetensors

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to Decode. It must never panic; when it
// accepts a file, the tensors must tile the data section and survive an
// Encode/Decode round trip unchanged. The seed corpus in
// testdata/fuzz/FuzzDecode (valid files, truncations, flipped bytes, huge
// lengths, overlapping offsets, ...) runs with every plain `go test`.
func FuzzDecode(f *testing.F) {
	var b bytes.Buffer
	if err := Encode(&b, randomTensors(9)[:4], map[string]string{"k": "v"}); err != nil {
		f.Fatal(err)
	}
	f.Add(b.Bytes())
	f.Add(rawFile(`{}`, nil))
	f.Add(rawFile(`{"a":{"dtype":"F16","shape":[1],"data_offsets":[0,2]}}`, []byte{0, 0x3c}))
	f.Fuzz(func(t *testing.T, in []byte) {
		file, err := Decode(bytes.NewReader(in), int64(len(in)), "fuzz")
		if err != nil {
			return
		}
		n := int(binary.LittleEndian.Uint64(in))
		total := 0
		for _, tn := range file.Tensors {
			total += len(tn.Data)
			if want, err := tn.byteLen(); err != nil || want != len(tn.Data) {
				t.Fatalf("tensor %q: %d bytes for %s %v (%v)", tn.Name, len(tn.Data), tn.DType, tn.Shape, err)
			}
		}
		if total != len(in)-8-n {
			t.Fatalf("tensors hold %d bytes of a %d-byte data section", total, len(in)-8-n)
		}
		var out bytes.Buffer
		if err := Encode(&out, file.Tensors, file.Metadata); err != nil {
			t.Fatalf("re-encode an accepted file: %v", err)
		}
		again, err := Decode(bytes.NewReader(out.Bytes()), int64(out.Len()), "re-encoded")
		if err != nil {
			t.Fatalf("decode a re-encoded file: %v", err)
		}
		if len(again.Metadata) != len(file.Metadata) || (len(file.Metadata) > 0 && !reflect.DeepEqual(again.Metadata, file.Metadata)) {
			t.Fatalf("metadata %q became %q", file.Metadata, again.Metadata)
		}
		if len(again.Tensors) != len(file.Tensors) {
			t.Fatalf("%d tensors became %d", len(file.Tensors), len(again.Tensors))
		}
		for _, want := range file.Tensors {
			got, ok := again.Get(want.Name)
			if !ok || got.DType != want.DType || !reflect.DeepEqual(got.Shape, want.Shape) || !bytes.Equal(got.Data, want.Data) {
				t.Fatalf("tensor %q changed in the round trip", want.Name)
			}
		}
	})
}
