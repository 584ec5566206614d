package data

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/vitgo/vit/internal/regfile"
)

// IDX is a decoded IDX file of unsigned bytes (type code 0x08), the format of
// MNIST and Fashion-MNIST: Dims[0] is the item count, the rest the item shape.
type IDX struct {
	Dims []int
	Data []uint8 // row-major, len = product of Dims
}

const maxIDXDims = 4

// ReadIDX reads and decodes the IDX file at path, gzip-compressed or raw.
func ReadIDX(path string) (*IDX, error) {
	b, err := regfile.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read IDX file: %w", err)
	}
	return DecodeIDX(path, b)
}

// DecodeIDX decodes the bytes of an IDX file, gzip-compressed (detected by
// its magic bytes) or raw; name is used in errors. The header's dimensions
// are checked against the bytes actually present before anything is
// allocated, so no input makes it allocate more than its (decompressed)
// size. Raw Data aliases b.
func DecodeIDX(name string, b []byte) (*IDX, error) {
	if len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b {
		return decodeIDXGzip(name, b)
	}
	dims, hdr, err := parseIDXHeader(name, b)
	if err != nil {
		return nil, err
	}
	body := b[hdr:]
	n, err := idxBodySize(name, dims, len(body))
	if err != nil {
		return nil, err
	}
	if len(body) != n {
		return nil, fmt.Errorf("idx %s: %d trailing bytes after the %d-byte body of dims %v", name, len(body)-n, n, dims)
	}
	return &IDX{Dims: dims, Data: body}, nil
}

// parseIDXHeader validates the magic number and returns the dims and the
// header length.
func parseIDXHeader(name string, b []byte) (dims []int, hdr int, err error) {
	if len(b) < 4 {
		return nil, 0, fmt.Errorf("idx %s: file of %d bytes is too short for the 4-byte magic number", name, len(b))
	}
	magic := binary.BigEndian.Uint32(b)
	if b[0] != 0 || b[1] != 0 {
		return nil, 0, fmt.Errorf("idx %s: bad magic number 0x%08x: first two bytes must be zero", name, magic)
	}
	if b[2] != 0x08 {
		return nil, 0, fmt.Errorf("idx %s: magic number 0x%08x has data type 0x%02x, only unsigned bytes (0x08) are supported", name, magic, b[2])
	}
	nd := int(b[3])
	if nd < 1 || nd > maxIDXDims {
		return nil, 0, fmt.Errorf("idx %s: magic number 0x%08x has %d dimensions, want 1 to %d", name, magic, nd, maxIDXDims)
	}
	hdr = 4 + 4*nd
	if len(b) < hdr {
		return nil, 0, fmt.Errorf("idx %s: truncated header: %d dimensions need %d bytes, file has %d", name, nd, hdr, len(b))
	}
	dims = make([]int, nd)
	for i := range dims {
		d := binary.BigEndian.Uint32(b[4+4*i:])
		if d > 1<<30 {
			return nil, 0, fmt.Errorf("idx %s: dimension %d is %d, implausibly large", name, i, d)
		}
		dims[i] = int(d)
	}
	return dims, hdr, nil
}

// idxBodySize returns the product of dims, failing as soon as it exceeds avail
// (the bytes present) so that a lying header is caught before allocation.
func idxBodySize(name string, dims []int, avail int) (int, error) {
	n := 1
	for _, d := range dims {
		if d == 0 {
			return 0, nil
		}
		if n > avail/d {
			return 0, fmt.Errorf("idx %s: truncated body: dims %v need more than the %d bytes present", name, dims, avail)
		}
		n *= d
	}
	if n > avail {
		return 0, fmt.Errorf("idx %s: truncated body: dims %v need %d bytes, %d present", name, dims, n, avail)
	}
	return n, nil
}

func decodeIDXGzip(name string, b []byte) (*IDX, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("idx %s: gzip: %w", name, err)
	}
	defer zr.Close()
	var head [4 + 4*maxIDXDims]byte
	if _, err := io.ReadFull(zr, head[:4]); err != nil {
		return nil, fmt.Errorf("idx %s: reading magic number: %w", name, gzErr(err))
	}
	nd := int(head[3])
	hdrLen := 4
	if head[0] == 0 && head[1] == 0 && head[2] == 0x08 && nd >= 1 && nd <= maxIDXDims {
		hdrLen = 4 + 4*nd
		if _, err := io.ReadFull(zr, head[4:hdrLen]); err != nil {
			return nil, fmt.Errorf("idx %s: truncated header: %w", name, gzErr(err))
		}
	}
	dims, _, err := parseIDXHeader(name, head[:hdrLen])
	if err != nil {
		return nil, err
	}
	// The declared size bounds the read; the buffer grows only with the bytes
	// the stream actually yields.
	want, err := idxBodySize(name, dims, 1<<40)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(io.LimitReader(zr, int64(want)+1))
	if err != nil {
		return nil, fmt.Errorf("idx %s: decompressing body: %w", name, gzErr(err))
	}
	if len(body) < want {
		return nil, fmt.Errorf("idx %s: truncated body: dims %v need %d bytes, %d present", name, dims, want, len(body))
	}
	if len(body) > want {
		return nil, fmt.Errorf("idx %s: trailing bytes after the %d-byte body of dims %v", name, want, dims)
	}
	return &IDX{Dims: dims, Data: body}, nil
}

func gzErr(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
