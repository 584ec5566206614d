package data

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color/palette"
	"image/gif"
	"image/jpeg"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"github.com/vitgo/vit/internal/regfile"
)

// pngChunk appends one PNG chunk (length, type, data, CRC) to b.
func pngChunk(b []byte, typ string, data []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
	start := len(b)
	b = append(b, typ...)
	b = append(b, data...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[start:]))
}

// pngHeaderOnly returns a PNG whose IHDR claims w×h pixels of the given
// bit depth and colour type, followed by an IDAT of idat bytes (not a valid
// zlib stream beyond its first two bytes) and IEND: a header-only bomb.
func pngHeaderOnly(w, h uint32, depth, colorType byte, idat int) []byte {
	b := []byte("\x89PNG\r\n\x1a\n")
	ihdr := binary.BigEndian.AppendUint32(nil, w)
	ihdr = binary.BigEndian.AppendUint32(ihdr, h)
	ihdr = append(ihdr, depth, colorType, 0, 0, 0)
	b = pngChunk(b, "IHDR", ihdr)
	data := make([]byte, idat)
	if idat >= 2 {
		data[0], data[1] = 0x78, 0x9c // zlib header
	}
	b = pngChunk(b, "IDAT", data)
	return pngChunk(b, "IEND", nil)
}

// TestDecodedBytesLimit: a 7000×7000 16-bit RGBA PNG is under the 50 MP
// pixel limit but decodes to 392 MB; it is refused from its header as
// over the decoded-bytes limit (4 bytes a pixel at the pixel limit), before
// anything is decoded, while the same size in 8-bit grey passes the check.
func TestDecodedBytesLimit(t *testing.T) {
	big := pngHeaderOnly(7000, 7000, 16, 6, 400_000) // enough bytes to pass the compression bound
	_, err := CheckEncoded("rgba64.png", big, 0)
	var dt *DecodedTooLargeError
	if !errors.As(err, &dt) || dt.Bytes != 7000*7000*8 || dt.Limit != MaxDecodedBytes(DefaultMaxPixels) {
		t.Fatalf("CheckEncoded(7000×7000 RGBA64) = %v, want a *DecodedTooLargeError of %d bytes", err, 7000*7000*8)
	}
	gray := pngHeaderOnly(7000, 7000, 8, 0, 400_000)
	if h, err := CheckEncoded("gray.png", gray, 0); err != nil || h.Decoded != 7000*7000 {
		t.Fatalf("CheckEncoded(7000×7000 gray) = %+v, %v; want it accepted, %d bytes decoded", h, err, 7000*7000)
	}
	// Grey with a tRNS chunk decodes to NRGBA; an interlaced image holds its
	// largest Adam7 pass besides.
	withTRNS := pngHeaderOnly(1000, 1000, 8, 0, 10_000)
	withTRNS = append(withTRNS[:33:33], append(pngChunk(nil, "tRNS", []byte{0, 0}), withTRNS[33:]...)...)
	if h, err := CheckEncoded("trns.png", withTRNS, 0); err != nil || h.Decoded != 4*1000*1000 {
		t.Fatalf("grey with tRNS: %+v, %v; want 4 bytes a pixel", h, err)
	}
	laced := pngHeaderOnly(1000, 1000, 8, 2, 10_000)
	laced[28] = 1 // IHDR interlace method: Adam7
	binary.BigEndian.PutUint32(laced[29:], crc32.ChecksumIEEE(laced[12:29]))
	if h, err := CheckEncoded("laced.png", laced, 0); err != nil || h.Decoded != 6*1000*1000 {
		t.Fatalf("interlaced RGB: %+v, %v; want 4 + 2 bytes a pixel", h, err)
	}
	// The folder data set refuses the file at Open, naming it.
	root := writeFolder(t)
	p := filepath.Join(root, "train", "cat", "deep.png")
	writeFile(t, p, big)
	cfg := DefaultConfig()
	cfg.Name, cfg.Root = NameFolder, root
	if _, err := Open(cfg, Train, 3); !errors.As(err, &dt) || dt.Path != p {
		t.Fatalf("Open: %v, want a *DecodedTooLargeError naming %s", err, p)
	}
}

// TestBombHeaderOnly: a 69-byte PNG claiming 7000×7000 16-bit RGBA (and
// its 8-bit grey twin, under every byte limit) is refused as implausible
// from its size, allocating nothing like the image: image/png would
// allocate the whole image before finding the data missing.
func TestBombHeaderOnly(t *testing.T) {
	for _, tc := range []struct {
		name             string
		depth, colorType byte
		maxPixels        int64
	}{
		{"rgba64", 16, 6, 1_000_000_000},
		{"gray8", 8, 0, 0},
	} {
		bomb := pngHeaderOnly(7000, 7000, tc.depth, tc.colorType, 12)
		if len(bomb) > 80 {
			t.Fatalf("bomb of %d bytes", len(bomb))
		}
		p := filepath.Join(t.TempDir(), "bomb.png")
		writeFile(t, p, bomb)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := decodeImageFile(p, 3, tc.maxPixels)
		runtime.ReadMemStats(&after)
		var im *ImplausibleSizeError
		if !errors.As(err, &im) || im.FileBytes != int64(len(bomb)) {
			t.Errorf("%s: decodeImageFile = %v, want an *ImplausibleSizeError", tc.name, err)
		}
		if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
			t.Errorf("%s: refusing a %d-byte bomb allocated %d bytes", tc.name, len(bomb), d)
		}
	}
}

// TestBombJPEG: a baseline JPEG's header rewritten to claim 7000×7000 on
// its few hundred bytes is refused from its size; the real image passes.
func TestBombJPEG(t *testing.T) {
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, image.NewGray(image.Rect(0, 0, 16, 16)), nil); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	if _, err := CheckEncoded("ok.jpg", b, 0); err != nil {
		t.Fatalf("the real JPEG: %v", err)
	}
	i := bytes.Index(b, []byte{0xff, 0xc0})
	if i < 0 {
		t.Fatal("no SOF0")
	}
	bomb := bytes.Clone(b)
	binary.BigEndian.PutUint16(bomb[i+5:], 7000) // height
	binary.BigEndian.PutUint16(bomb[i+7:], 7000) // width
	var im *ImplausibleSizeError
	if _, err := CheckEncoded("bomb.jpg", bomb, 0); !errors.As(err, &im) {
		t.Fatalf("CheckEncoded(JPEG bomb) = %v, want an *ImplausibleSizeError", err)
	}
}

// TestFIFOInClassFolder: a named pipe named like an image in a class
// folder is refused (or skipped with skip_corrupt) by its type, never
// opened for a read that would wait forever; so is an IDX file that is a
// pipe.
func TestFIFOInClassFolder(t *testing.T) {
	root := writeFolder(t)
	p := filepath.Join(root, "train", "cat", "pipe.png")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	cfg := DefaultConfig()
	cfg.Name, cfg.Root = NameFolder, root
	var nr *regfile.NotRegularError
	if _, err := Open(cfg, Train, 3); !errors.As(err, &nr) || nr.Path != p {
		t.Fatalf("Open: %v, want a *regfile.NotRegularError naming %s", err, p)
	}
	cfg.SkipCorrupt = true
	if ds, err := Open(cfg, Train, 3); err != nil || ds.(*Folder).Skipped() != 1 {
		t.Fatalf("Open with skip_corrupt: %v, want the pipe skipped", err)
	}
	if _, err := decodeImageFile(p, 3, 0); !errors.As(err, &nr) {
		t.Fatalf("decodeImageFile(FIFO) = %v", err)
	}
	idx := filepath.Join(t.TempDir(), "train-images-idx3-ubyte")
	if err := syscall.Mkfifo(idx, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadIDX(idx); !errors.As(err, &nr) {
		t.Fatalf("ReadIDX(FIFO) = %v, want a *regfile.NotRegularError", err)
	}
	os.Remove(idx)
}

// TestDecodeBudget: Acquire waits while the bytes are taken and proceeds
// when they are released (a cost above the whole budget takes all of it);
// TryAcquire refuses instead of waiting.
func TestDecodeBudget(t *testing.T) {
	b := NewBudget(100)
	held, err := b.Acquire(context.Background(), 70)
	if err != nil || held != 70 {
		t.Fatal(held, err)
	}
	if _, err := b.TryAcquire(40); !errors.Is(err, ErrBudgetBusy) {
		t.Fatalf("TryAcquire(40) with 70 of 100 used = %v, want ErrBudgetBusy", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := b.Acquire(ctx, 40); !errors.Is(err, context.Canceled) {
		t.Fatalf("Acquire with a canceled context = %v", err)
	}
	got := make(chan int64)
	go func() {
		n, _ := b.Acquire(context.Background(), 1000) // over the budget: takes all of it
		got <- n
	}()
	b.Release(held)
	if n := <-got; n != 100 || b.InUse() != 100 {
		t.Fatalf("Acquire(1000) took %d, in use %d; want the whole budget, 100", n, b.InUse())
	}
}

// TestLoaderHoldsDecodeBudget: the loader's workers take each folder
// image's decode cost from the budget and give it back once the image is
// transformed: with a budget of one byte (a cost above it takes all of
// it), eight workers hold one image at a time, and nothing is held after
// the epoch. (A loader that never released would wait forever, which the
// test's timeout reports.)
func TestLoaderHoldsDecodeBudget(t *testing.T) {
	root := writeFolder(t)
	cfg := DefaultConfig()
	cfg.Name, cfg.Root, cfg.Workers = NameFolder, root, 8
	ds, err := Open(cfg, Train, 3)
	if err != nil {
		t.Fatal(err)
	}
	f := ds.(*Folder)
	f.budget = NewBudget(1) // every cost takes the whole budget
	in := make(chan int64, 1024)
	l, err := NewLoader(observed{f, in}, LoaderConfig{BatchSize: 2, ImgH: 8, ImgW: 8, Workers: 8, Prefetch: 2,
		Augment: DefaultAugmentConfig(), Mixup: DefaultMixupConfig(), NumClasses: len(f.Classes())})
	if err != nil {
		t.Fatal(err)
	}
	it := l.Epoch(0, 0)
	for {
		b, ok, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		b.Release()
	}
	it.Close()
	close(in)
	n := 0
	for used := range in {
		n++
		if used != 1 {
			t.Fatalf("a decode in flight saw %d bytes of the budget in use, want its own 1", used)
		}
	}
	if n != f.Len() || f.budget.InUse() != 0 {
		t.Fatalf("%d decodes seen of %d; %d bytes still held after the epoch", n, f.Len(), f.budget.InUse())
	}
}

// observed wraps a Folder and reports the budget in use while each image
// is held (between ItemHeld and release).
type observed struct {
	*Folder
	in chan<- int64
}

func (o observed) ItemHeld(i int) (Image, int, func(), error) {
	img, l, release, err := o.Folder.ItemHeld(i)
	o.in <- o.Folder.budget.InUse()
	return img, l, release, err
}

// TestBombGIF: a GIF whose first frame claims 4000×4000 pixels over a few
// bytes of LZW data is refused from its size; a real GIF, and one whose
// small first frame lies on a large screen, pass.
func TestBombGIF(t *testing.T) {
	var buf bytes.Buffer
	m := image.NewPaletted(image.Rect(0, 0, 16, 16), palette.Plan9)
	if err := gif.Encode(&buf, m, nil); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	if h, err := CheckEncoded("ok.gif", b, 0); err != nil || h.Decoded != 256 {
		t.Fatalf("the real GIF: %+v, %v", h, err)
	}
	i := bytes.IndexByte(b[13+3*256:], 0x2c) + 13 + 3*256 // after the global colour table
	big := bytes.Clone(b)
	binary.LittleEndian.PutUint16(big[6:], 4000) // screen
	binary.LittleEndian.PutUint16(big[8:], 4000)
	if _, err := CheckEncoded("screen.gif", big, 0); err != nil {
		t.Fatalf("a 16×16 frame on a 4000×4000 screen: %v", err)
	}
	binary.LittleEndian.PutUint16(big[i+5:], 4000) // first frame
	binary.LittleEndian.PutUint16(big[i+7:], 4000)
	var im *ImplausibleSizeError
	if _, err := CheckEncoded("bomb.gif", big, 0); !errors.As(err, &im) {
		t.Fatalf("CheckEncoded(GIF bomb) = %v, want an *ImplausibleSizeError", err)
	}
}
