package safetensors

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"sort"

	"github.com/vitgo/vit/internal/regfile"
)

// MaxHeaderSize is the largest JSON header accepted, in bytes (the limit of
// the reference implementation).
const MaxHeaderSize = 100_000_000

// File is a decoded safetensors file.
type File struct {
	// Metadata is the header's "__metadata__" map; empty if absent.
	Metadata map[string]string
	// Tensors are in data-section order (ascending data_offsets).
	Tensors []Tensor
}

// Get returns the tensor called name.
func (f *File) Get(name string) (Tensor, bool) {
	for _, t := range f.Tensors {
		if t.Name == name {
			return t, true
		}
	}
	return Tensor{}, false
}

// Names returns the tensor names in data-section order.
func (f *File) Names() []string {
	names := make([]string, len(f.Tensors))
	for i, t := range f.Tensors {
		names[i] = t.Name
	}
	return names
}

// ReadFile reads and validates the safetensors file at path.
func ReadFile(path string) (*File, error) {
	f, size, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Decode(f, size, path)
}

// ReadFileSHA256 is ReadFile that also returns the hex SHA-256 digest of
// the bytes it parsed: the file is opened once and each byte is hashed as
// it is read, so the digest names exactly what was loaded, even when the
// path is replaced or rewritten while it is read.
func ReadFileSHA256(path string) (*File, string, error) {
	f, size, err := openRegular(path)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	h := &hashingReaderAt{r: f, h: sha256.New()}
	file, err := Decode(h, size, path)
	if err != nil {
		return nil, "", err
	}
	if h.next != size { // Decode reads every byte of a valid file, in order
		return nil, "", fmt.Errorf("read %s: digest covers %d of its %d bytes", path, h.next, size)
	}
	return file, hex.EncodeToString(h.h.Sum(nil)), nil
}

// hashingReaderAt hashes the bytes read from r in file order: a read that
// starts where the hashed prefix ends extends it, any other read (the
// decoder's probe of the last byte) is not hashed.
type hashingReaderAt struct {
	r    io.ReaderAt
	h    hash.Hash
	next int64 // the bytes [0, next) are hashed
}

func (r *hashingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := r.r.ReadAt(p, off)
	if off == r.next && n > 0 {
		r.h.Write(p[:n])
		r.next += int64(n)
	}
	return n, err
}

// openRegular opens path for reading and returns its size; anything but a
// regular file (a directory, a device, a FIFO) is an error naming path.
func openRegular(path string) (*os.File, int64, error) {
	f, st, err := regfile.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("read safetensors: %w", err)
	}
	return f, st.Size(), nil
}

// Decode reads and validates a safetensors file of size bytes from r; name
// (usually the path) is used in error messages. The whole header is checked
// before any tensor memory is allocated, and the allocation never exceeds
// size, which must be the true size of the content of r.
func Decode(r io.ReaderAt, size int64, name string) (*File, error) {
	f, err := decode(r, size)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return f, nil
}

// ReadMetadata reads and validates only the header of the safetensors file
// at path and returns its metadata; no tensor data is read.
func ReadMetadata(path string) (map[string]string, error) {
	f, size, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	meta, _, _, err := decodeHeader(f, size)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return meta, nil
}

// decodeHeader reads and checks the header: the metadata, the entries in
// data order, and where the data section starts.
func decodeHeader(r io.ReaderAt, size int64) (map[string]string, []entry, int64, error) {
	if size < 8 {
		return nil, nil, 0, fmt.Errorf("file is %d bytes, shorter than the 8-byte header length", size)
	}
	var prefix [8]byte
	if err := readFull(r, prefix[:], 0); err != nil {
		return nil, nil, 0, fmt.Errorf("header length: %w", err)
	}
	n := binary.LittleEndian.Uint64(prefix[:])
	if n > MaxHeaderSize {
		return nil, nil, 0, fmt.Errorf("header length %d exceeds the %d-byte limit", n, MaxHeaderSize)
	}
	if n > uint64(size-8) {
		return nil, nil, 0, fmt.Errorf("header length %d exceeds the %d bytes after the length prefix", n, size-8)
	}
	buf := make([]byte, n)
	if err := readFull(r, buf, 8); err != nil {
		return nil, nil, 0, fmt.Errorf("header: %w", err)
	}
	meta, entries, err := parseHeader(buf)
	if err != nil {
		return nil, nil, 0, err
	}
	dataStart := 8 + int64(n)
	if err := checkLayout(entries, size-dataStart); err != nil {
		return nil, nil, 0, err
	}
	return meta, entries, dataStart, nil
}

func decode(r io.ReaderAt, size int64) (*File, error) {
	meta, entries, dataStart, err := decodeHeader(r, size)
	if err != nil {
		return nil, err
	}
	// The header promises size bytes; make sure they exist before allocating.
	if size > dataStart {
		var last [1]byte
		if err := readFull(r, last[:], size-1); err != nil {
			return nil, fmt.Errorf("data section: %w", err)
		}
	}
	f := &File{Metadata: meta, Tensors: make([]Tensor, len(entries))}
	for i, e := range entries {
		data := make([]byte, e.end-e.begin)
		if err := readFull(r, data, dataStart+e.begin); err != nil {
			return nil, fmt.Errorf("tensor %q: %w", e.name, err)
		}
		f.Tensors[i] = Tensor{Name: e.name, DType: e.dtype, Shape: e.shape, Data: data}
	}
	return f, nil
}

// checkLayout verifies every entry's byte length and offsets and that the
// entries tile the data section of dataLen bytes exactly. It sorts entries
// into data order.
func checkLayout(entries []entry, dataLen int64) error {
	for _, e := range entries {
		t := Tensor{Name: e.name, DType: e.dtype, Shape: e.shape}
		n, err := t.byteLen()
		if err != nil {
			return fmt.Errorf("tensor %q: %w", e.name, err)
		}
		switch {
		case e.begin > e.end:
			return fmt.Errorf("tensor %q: data_offsets [%d, %d] end before they begin", e.name, e.begin, e.end)
		case e.end > dataLen:
			return fmt.Errorf("tensor %q: data_offsets [%d, %d] exceed the %d-byte data section", e.name, e.begin, e.end, dataLen)
		case e.end-e.begin != int64(n):
			return fmt.Errorf("tensor %q: shape %v with dtype %s needs %d bytes, data_offsets [%d, %d] give %d",
				e.name, e.shape, e.dtype, n, e.begin, e.end, e.end-e.begin)
		}
	}
	sort.Slice(entries, func(i, j int) bool {
		a, b := entries[i], entries[j]
		if a.begin != b.begin {
			return a.begin < b.begin
		}
		if a.end != b.end {
			return a.end < b.end
		}
		return a.name < b.name
	})
	var at int64
	for i, e := range entries {
		if e.begin < at {
			return fmt.Errorf("tensor %q: data_offsets [%d, %d] overlap tensor %q", e.name, e.begin, e.end, entries[i-1].name)
		}
		if e.begin > at {
			return fmt.Errorf("tensor %q: data_offsets [%d, %d] leave bytes [%d, %d) of the data section unused", e.name, e.begin, e.end, at, e.begin)
		}
		at = e.end
	}
	if at != dataLen {
		return fmt.Errorf("tensors cover %d bytes of the %d-byte data section", at, dataLen)
	}
	return nil
}

// readFull reads len(p) bytes at off, treating a short read as an error.
func readFull(r io.ReaderAt, p []byte, off int64) error {
	n, err := r.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("read %d bytes at offset %d: %w", len(p), off, err)
}
