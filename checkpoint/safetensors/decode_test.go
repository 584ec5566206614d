package safetensors

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/vitgo/vit/internal/regfile"
)

// rawFile assembles a file from a header (unpadded) and a data section.
func rawFile(header string, data []byte) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	b = append(b, header...)
	return append(b, data...)
}

// withLength replaces the header-length prefix of file.
func withLength(file []byte, n uint64) []byte {
	b := append([]byte(nil), file...)
	binary.LittleEndian.PutUint64(b, n)
	return b
}

func TestDecodeRejects(t *testing.T) {
	const w = `"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}`
	data8 := make([]byte, 8)
	valid := rawFile("{"+w+"}", data8)
	tests := []struct {
		name string
		file []byte
		want string // besides the file name, the error must contain this
	}{
		{"empty file", nil, "shorter than the 8-byte header length"},
		{"truncated length", valid[:5], "shorter than the 8-byte header length"},
		{"header length over limit", withLength(valid, MaxHeaderSize+1), "exceeds the 100000000-byte limit"},
		{"header length huge", withLength(valid, 1<<63), "exceeds the 100000000-byte limit"},
		{"header length beyond file", withLength(valid, uint64(len(valid))), "exceeds the"},
		{"truncated header", valid[:20], "exceeds the 12 bytes after the length prefix"},
		{"truncated data", valid[:len(valid)-1], `tensor "w": data_offsets [0, 8] exceed the 7-byte data section`},
		{"empty header", rawFile("", nil), "does not start with '{'"},
		{"leading space", rawFile(" {}", nil), "does not start with '{'"},
		{"array header", rawFile("[]", nil), "does not start with '{'"},
		{"invalid utf8", rawFile("{\"w\xff\":{}}", nil), "not valid UTF-8"},
		{"malformed json", rawFile(`{"w":{"dtype":"F32",}}`, nil), `tensor "w"`},
		{"unterminated", rawFile(`{"w":{"dtype":"F32"`, nil), `tensor "w"`},
		{"trailing object", rawFile(`{}{}`, nil), "after the closing '}'"},
		{"trailing garbage", rawFile(`{} x`, nil), "after the closing '}'"},
		{"duplicate tensor", rawFile("{"+w+","+w+"}", data8), `tensor "w": duplicate name`},
		{"duplicate metadata", rawFile(`{"__metadata__":{},"__metadata__":{}}`, nil), "duplicate __metadata__"},
		{"duplicate metadata key", rawFile(`{"__metadata__":{"a":"1","a":"2"}}`, nil), `duplicate key "a"`},
		{"metadata number", rawFile(`{"__metadata__":{"step":100}}`, nil), `key "step": value must be a string, got 100`},
		{"metadata nested", rawFile(`{"__metadata__":{"cfg":{"a":"b"}}}`, nil), `key "cfg": value must be a string`},
		{"metadata null", rawFile(`{"__metadata__":null}`, nil), `__metadata__: expected "{", got null`},
		{"metadata array", rawFile(`{"__metadata__":["a"]}`, nil), `__metadata__: expected "{"`},
		{"entry not object", rawFile(`{"w":[1]}`, nil), `tensor "w": expected "{"`},
		{"empty name", rawFile(`{"":{"dtype":"U8","shape":[],"data_offsets":[0,1]}}`, []byte{1}), "empty name"},
		{"unknown dtype", rawFile(`{"w":{"dtype":"F128","shape":[1],"data_offsets":[0,16]}}`, make([]byte, 16)), `tensor "w": unknown dtype "F128"`},
		{"dtype number", rawFile(`{"w":{"dtype":4,"shape":[1],"data_offsets":[0,4]}}`, data8[:4]), `tensor "w": dtype: expected a string`},
		{"negative dim", rawFile(`{"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}}`, data8), `tensor "w": shape: expected a non-negative integer, got -2`},
		{"fractional dim", rawFile(`{"w":{"dtype":"F32","shape":[2.0],"data_offsets":[0,8]}}`, data8), `tensor "w": shape: expected a non-negative integer, got 2.0`},
		{"exponent dim", rawFile(`{"w":{"dtype":"F32","shape":[2e0],"data_offsets":[0,8]}}`, data8), `got 2e0`},
		{"huge dim", rawFile(`{"w":{"dtype":"F32","shape":[99999999999999999999],"data_offsets":[0,8]}}`, data8), `got 99999999999999999999`},
		{"nested shape", rawFile(`{"w":{"dtype":"F32","shape":[[2]],"data_offsets":[0,8]}}`, data8), `tensor "w": shape: expected a non-negative integer, got "["`},
		{"shape not array", rawFile(`{"w":{"dtype":"F32","shape":2,"data_offsets":[0,8]}}`, data8), `tensor "w": shape: expected "["`},
		{"element count overflow", rawFile(`{"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}}`, data8), `tensor "w": shape [4294967296 4294967296]: element count overflows`},
		{"byte length overflow", rawFile(`{"w":{"dtype":"F64","shape":[2305843009213693952],"data_offsets":[0,8]}}`, data8), `tensor "w": shape [2305843009213693952] with dtype F64: byte length overflows`},
		{"one offset", rawFile(`{"w":{"dtype":"F32","shape":[2],"data_offsets":[0]}}`, data8), `tensor "w": data_offsets: expected a non-negative integer, got "]"`},
		{"three offsets", rawFile(`{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8,8]}}`, data8), `tensor "w": data_offsets: must have exactly 2 entries`},
		{"negative offset", rawFile(`{"w":{"dtype":"F32","shape":[2],"data_offsets":[-8,0]}}`, data8), `tensor "w": data_offsets: expected a non-negative integer, got -8`},
		{"offset beyond int64", rawFile(`{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,18446744073709551615]}}`, data8), `got 18446744073709551615`},
		{"offsets reversed", rawFile(`{"w":{"dtype":"U8","shape":[0],"data_offsets":[8,0]}}`, data8), `tensor "w": data_offsets [8, 0] end before they begin`},
		{"offsets outside data", rawFile(`{"w":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}`, data8), `tensor "w": data_offsets [4, 12] exceed the 8-byte data section`},
		{"length mismatch", rawFile(`{"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`, data8), `tensor "w": shape [3] with dtype F32 needs 12 bytes, data_offsets [0, 8] give 8`},
		{"overlap", rawFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, data8),
			`tensor "b": data_offsets [4, 8] overlap tensor "a"`},
		{"same range", rawFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, data8),
			`tensor "b": data_offsets [0, 8] overlap tensor "a"`},
		{"gap", rawFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, data8), `tensor "a": data_offsets [4, 8] leave bytes [0, 4) of the data section unused`},
		{"uncovered tail", rawFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, data8), "tensors cover 4 bytes of the 8-byte data section"},
		{"data without tensors", rawFile(`{}`, data8), "tensors cover 0 bytes of the 8-byte data section"},
		{"missing dtype", rawFile(`{"w":{"shape":[2],"data_offsets":[0,8]}}`, data8), `tensor "w": missing field "dtype"`},
		{"missing offsets", rawFile(`{"w":{"dtype":"F32","shape":[2]}}`, data8), `tensor "w": missing field "data_offsets"`},
		{"unknown field", rawFile(`{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"stride":[1]}}`, data8), `tensor "w": unknown field "stride"`},
		{"duplicate field", rawFile(`{"w":{"dtype":"F32","dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, data8), `tensor "w": duplicate field "dtype"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Decode(bytes.NewReader(tc.file), int64(len(tc.file)), "bad.safetensors")
			if err == nil {
				t.Fatalf("no error; decoded %q", f.Names())
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "read bad.safetensors: ") || !strings.Contains(msg, tc.want) {
				t.Fatalf("error %q\nwant it to name bad.safetensors and contain %q", msg, tc.want)
			}
		})
	}
}

func TestDecodeAccepts(t *testing.T) {
	tests := []struct {
		name, header string
		data         []byte
		names        []string
	}{
		{"empty", `{}`, nil, []string{}},
		{"padded", `{"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}` + "   \n\t", []byte{7}, []string{"w"}},
		{"metadata only", `{"__metadata__":{"a":"b"}}`, nil, []string{}},
		{"field order free", `{"w":{"data_offsets":[0,1],"shape":[1],"dtype":"BOOL"}}`, []byte{1}, []string{"w"}},
		{"zero-size tensors anywhere", `{"z":{"dtype":"F32","shape":[0,5],"data_offsets":[1,1]},"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"y":{"dtype":"I64","shape":[3,0],"data_offsets":[0,0]}}`,
			[]byte{7}, []string{"y", "a", "z"}},
		{"header order is not data order", `{"b":{"dtype":"U8","shape":[1],"data_offsets":[1,2]},"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}`,
			[]byte{1, 2}, []string{"a", "b"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			file := rawFile(tc.header, tc.data)
			f, err := Decode(bytes.NewReader(file), int64(len(file)), "ok.safetensors")
			if err != nil {
				t.Fatal(err)
			}
			if got := f.Names(); strings.Join(got, ",") != strings.Join(tc.names, ",") {
				t.Fatalf("names %q, want %q", got, tc.names)
			}
		})
	}
}

// shortReader claims a size it does not have.
type shortReader struct{ b []byte }

func (r shortReader) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(r.b)) {
		return 0, io.EOF
	}
	n := copy(p, r.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// TestDecodeLyingSize: a header promising 1 TB of data in a reader of a few
// bytes is an error before anything of that size is allocated.
func TestDecodeLyingSize(t *testing.T) {
	const tb = 1 << 40
	file := rawFile(`{"w":{"dtype":"U8","shape":[1099511627776],"data_offsets":[0,1099511627776]}}`, []byte{1, 2, 3})
	header := int64(len(file) - 3)
	_, err := Decode(shortReader{file}, header+tb, "lying.safetensors")
	if err == nil || !strings.Contains(err.Error(), "lying.safetensors: data section") {
		t.Fatalf("err %v, want a data-section read error", err)
	}
}

func TestReadFileErrors(t *testing.T) {
	if _, err := ReadFile("testdata/does-not-exist.safetensors"); err == nil || !strings.Contains(err.Error(), "does-not-exist") {
		t.Fatalf("missing file: %v", err)
	}
	var nr *regfile.NotRegularError
	if _, err := ReadFile("testdata"); !errors.As(err, &nr) || nr.Path != "testdata" {
		t.Fatalf("directory: %v, want a *regfile.NotRegularError", err)
	}
}

// TestReadFileFIFO: a checkpoint path that is a named pipe (eval
// -checkpoint, finetune.init_from, the server's -checkpoint) is refused by
// its type instead of blocking in open until a writer comes.
func TestReadFileFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "model.safetensors")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	var nr *regfile.NotRegularError
	if _, err := ReadFile(p); !errors.As(err, &nr) || nr.Mode&fs.ModeNamedPipe == 0 {
		t.Fatalf("ReadFile(FIFO) = %v, want a *regfile.NotRegularError", err)
	}
	if _, err := ReadMetadata(p); !errors.As(err, &nr) {
		t.Fatalf("ReadMetadata(FIFO) = %v, want a *regfile.NotRegularError", err)
	}
}
