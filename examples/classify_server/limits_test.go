package main

import (
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"log"
	"net/http"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"github.com/vitgo/vit/internal/regfile"
)

// pngHeader returns a PNG claiming w×h pixels of the given depth and
// colour type over idat bytes of IDAT (a zlib header, then zeros).
func pngHeader(w, h uint32, depth, colorType byte, idat int) []byte {
	chunk := func(b []byte, typ string, d []byte) []byte {
		b = binary.BigEndian.AppendUint32(b, uint32(len(d)))
		s := len(b)
		b = append(append(b, typ...), d...)
		return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[s:]))
	}
	ihdr := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, w), h)
	b := chunk([]byte("\x89PNG\r\n\x1a\n"), "IHDR", append(ihdr, depth, colorType, 0, 0, 0))
	d := make([]byte, idat)
	d[0], d[1] = 0x78, 0x9c
	b = chunk(b, "IDAT", d)
	return chunk(b, "IEND", nil)
}

// TestServerBombAndDecodedLimit: the 69-byte header-only bomb (7000×7000
// 16-bit RGBA) is answered 400 without allocating its 392 MB, even under a
// pixel limit it passes; an image
// under -max-pixels whose decode is over 4 bytes a pixel at that count is
// 413, both from the header.
func TestServerBombAndDecodedLimit(t *testing.T) {
	url, stop := start(t, "-max-pixels", "1000000000") // under every byte limit: only the size check stops it
	bomb := pngHeader(7000, 7000, 16, 6, 12)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	code, a := post(t, url, bomb)
	runtime.ReadMemStats(&after)
	if code != http.StatusBadRequest {
		t.Fatalf("bomb: %d %+v, want 400", code, a)
	}
	if d := after.TotalAlloc - before.TotalAlloc; d > 64<<20 {
		t.Fatalf("answering the %d-byte bomb allocated %d bytes", len(bomb), d)
	}
	stop()
	url, stop = start(t) // -max-pixels 250000: at most 1 MB decoded
	deep := pngHeader(500, 500, 16, 6, 3000)
	if code, a := post(t, url, deep); code != http.StatusRequestEntityTooLarge {
		t.Fatalf("500×500 RGBA64: %d %+v, want 413", code, a)
	}
	stop()
}

// TestServerFIFOCheckpoint: -checkpoint naming a named pipe ends run with
// an error naming it instead of blocking in open.
func TestServerFIFOCheckpoint(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "model.safetensors")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	err := run(context.Background(), []string{"-checkpoint", fifo, "-addr", "127.0.0.1:0"}, log.New(io.Discard, "", 0))
	var nr *regfile.NotRegularError
	if !errors.As(err, &nr) || nr.Path != fifo {
		t.Fatalf("run: %v, want a *regfile.NotRegularError naming %s", err, fifo)
	}
}
