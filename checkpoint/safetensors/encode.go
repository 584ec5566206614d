package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/vitgo/vit/internal/atomicfile"
)

// metadataKey is the reserved header key holding the string-to-string metadata.
const metadataKey = "__metadata__"

// Encode writes tensors and metadata to w in the safetensors format. The
// header lists the tensors sorted by name and the data section holds them in
// that order; the header is padded with spaces to a multiple of 8 bytes.
// Every tensor is checked first (known dtype, non-negative shape, len(Data) =
// product(Shape) × dtype size, unique non-empty name), so nothing is written
// for a bad tensor.
func Encode(w io.Writer, tensors []Tensor, metadata map[string]string) error {
	h, err := newHeader(tensors, metadata)
	if err != nil {
		return err
	}
	return h.writeTo(w)
}

// Write stores tensors and metadata at path atomically: it encodes into a
// temporary file in the same directory, fsyncs it, renames it over path and
// fsyncs the directory. If anything fails the previous file at path is left
// as it was and the temporary file is removed.
func Write(path string, tensors []Tensor, metadata map[string]string) error {
	h, err := newHeader(tensors, metadata)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return atomicfile.Write(path, h.writeTo)
}

// header is a validated, serialised header plus the tensors in data order.
type header struct {
	json    []byte   // padded JSON header
	tensors []Tensor // sorted by name = data section order
}

// newHeader validates tensors and metadata and builds the padded JSON header.
func newHeader(tensors []Tensor, metadata map[string]string) (*header, error) {
	sorted := append([]Tensor(nil), tensors...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })

	var b bytes.Buffer
	b.WriteByte('{')
	if len(metadata) > 0 {
		keys := make([]string, 0, len(metadata))
		for k, v := range metadata {
			if !utf8.ValidString(k) || !utf8.ValidString(v) {
				return nil, fmt.Errorf("%s[%q]: key and value must be valid UTF-8", metadataKey, k)
			}
			keys = append(keys, k)
		}
		sort.Strings(keys)
		writeJSONString(&b, metadataKey)
		b.WriteString(":{")
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONString(&b, k)
			b.WriteByte(':')
			writeJSONString(&b, metadata[k])
		}
		b.WriteByte('}')
	}
	var offset uint64
	for i, t := range sorted {
		switch {
		case t.Name == "":
			return nil, fmt.Errorf("tensor #%d has an empty name", i)
		case t.Name == metadataKey:
			return nil, fmt.Errorf("tensor %q: name is reserved for metadata", t.Name)
		case !utf8.ValidString(t.Name):
			return nil, fmt.Errorf("tensor %q: name is not valid UTF-8", t.Name)
		case i > 0 && sorted[i-1].Name == t.Name:
			return nil, fmt.Errorf("tensor %q: duplicate name", t.Name)
		}
		n, err := t.byteLen()
		if err != nil {
			return nil, fmt.Errorf("tensor %q: %w", t.Name, err)
		}
		if len(t.Data) != n {
			return nil, fmt.Errorf("tensor %q: shape %v with dtype %s needs %d bytes, has %d", t.Name, t.Shape, t.DType, n, len(t.Data))
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		writeJSONString(&b, t.Name)
		b.WriteString(`:{"dtype":`)
		writeJSONString(&b, string(t.DType))
		b.WriteString(`,"shape":[`)
		for k, d := range t.Shape {
			if k > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(d))
		}
		b.WriteString(`],"data_offsets":[`)
		b.WriteString(strconv.FormatUint(offset, 10))
		b.WriteByte(',')
		offset += uint64(n)
		b.WriteString(strconv.FormatUint(offset, 10))
		b.WriteString("]}")
	}
	b.WriteByte('}')
	for b.Len()%8 != 0 {
		b.WriteByte(' ')
	}
	if b.Len() > MaxHeaderSize {
		return nil, fmt.Errorf("header is %d bytes, over the %d-byte limit", b.Len(), MaxHeaderSize)
	}
	return &header{json: b.Bytes(), tensors: sorted}, nil
}

// writeTo writes the length prefix, the header and the data section.
func (h *header) writeTo(w io.Writer) error {
	var prefix [8]byte
	binary.LittleEndian.PutUint64(prefix[:], uint64(len(h.json)))
	if _, err := w.Write(prefix[:]); err != nil {
		return err
	}
	if _, err := w.Write(h.json); err != nil {
		return err
	}
	for _, t := range h.tensors {
		if _, err := w.Write(t.Data); err != nil {
			return fmt.Errorf("tensor %q: %w", t.Name, err)
		}
	}
	return nil
}

// writeJSONString appends s as a JSON string literal (s must be valid UTF-8).
func writeJSONString(b *bytes.Buffer, s string) {
	q, _ := json.Marshal(s) // cannot fail for a string
	b.Write(q)
}
