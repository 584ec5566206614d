package classify_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"github.com/vitgo/vit/classify"
	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/internal/regfile"
	"github.com/vitgo/vit/internal/testmodel"
)

// bombPNG is a 69-byte PNG whose header claims 7000×7000 16-bit RGBA
// (392 MB decoded) over 12 bytes of IDAT.
func bombPNG() []byte {
	chunk := func(b []byte, typ string, d []byte) []byte {
		b = binary.BigEndian.AppendUint32(b, uint32(len(d)))
		s := len(b)
		b = append(append(b, typ...), d...)
		return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[s:]))
	}
	ihdr := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 7000), 7000)
	b := chunk([]byte("\x89PNG\r\n\x1a\n"), "IHDR", append(ihdr, 16, 6, 0, 0, 0))
	b = chunk(b, "IDAT", append([]byte{0x78, 0x9c}, make([]byte, 10)...))
	return chunk(b, "IEND", nil)
}

// TestDecodeBombHeaderOnly: the 69-byte bomb is refused from its header
// without allocating the image, even with a pixel limit it is under.
func TestDecodeBombHeaderOnly(t *testing.T) {
	bomb := bombPNG()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := classify.Decode("bomb", bytes.NewReader(bomb), 1_000_000_000)
	runtime.ReadMemStats(&after)
	var im *data.ImplausibleSizeError
	if !errors.As(err, &im) {
		t.Fatalf("Decode(bomb) = %v, want a *data.ImplausibleSizeError", err)
	}
	if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
		t.Fatalf("refusing the %d-byte bomb allocated %d bytes", len(bomb), d)
	}
}

// TestDecodeBudgetNoWait: a Decoder with NoWait refuses with
// data.ErrBudgetBusy while the budget is held, and decodes once released;
// release gives the bytes back.
func TestDecodeBudgetNoWait(t *testing.T) {
	var buf bytes.Buffer
	writePNG(t, &buf, testmodel.Colour(0, 20, 20, 1))
	budget := data.NewBudget(1 << 20)
	held, _ := budget.Acquire(context.Background(), 1<<20)
	d := classify.Decoder{Budget: budget, NoWait: true}
	if _, _, err := d.Decode(context.Background(), "x", buf.Bytes()); !errors.Is(err, data.ErrBudgetBusy) {
		t.Fatalf("Decode with the budget in use = %v, want data.ErrBudgetBusy", err)
	}
	budget.Release(held)
	img, release, err := d.Decode(context.Background(), "x", buf.Bytes())
	if err != nil || img.Bounds().Dx() != 20 || budget.InUse() == 0 {
		t.Fatalf("Decode = %v, %v; in use %d", img, err, budget.InUse())
	}
	release()
	if budget.InUse() != 0 {
		t.Fatalf("after release %d bytes still in use", budget.InUse())
	}
}

// TestClassifyFilesFIFO: a named pipe among the files of a directory is
// reported as not a regular file and skipped; it is never opened.
func TestClassifyFilesFIFO(t *testing.T) {
	dir := t.TempDir()
	writeImage(t, filepath.Join(dir, "a.png"), testmodel.Colour(0, 12, 12, 0))
	pipe := filepath.Join(dir, "b.png")
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	paths, err := classify.ExpandPaths([]string{dir})
	if err != nil || len(paths) != 2 {
		t.Fatalf("ExpandPaths = %v, %v", paths, err)
	}
	c := load(t, classify.Options{})
	var errs []error
	err = c.ClassifyFiles(context.Background(), paths, func(r classify.Result) error {
		if r.Err != nil {
			errs = append(errs, r.Err)
		}
		return nil
	})
	var nr *regfile.NotRegularError
	if err != nil || len(errs) != 1 || !errors.As(errs[0], &nr) || nr.Path != pipe {
		t.Fatalf("ClassifyFiles: %v, file errors %v; want the pipe refused by type", err, errs)
	}
}

// TestLoadRefusesLanesOverMemory: a batch or a pool the machine cannot
// hold is refused by the memory estimate before any graph is built.
func TestLoadRefusesLanesOverMemory(t *testing.T) {
	for _, o := range []classify.Options{{MaxBatch: 1 << 30}, {PoolSize: 1 << 30}} {
		_, err := classify.Load(tiny(t), o)
		var me *classify.MemoryError
		if !errors.As(err, &me) || me.Need <= me.Have {
			t.Errorf("Load(%+v) = %v, want a *classify.MemoryError", o, err)
		}
	}
}

func writePNG(t *testing.T, buf *bytes.Buffer, img image.Image) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "x.png")
	writeImage(t, p, img)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	buf.Write(b)
}
