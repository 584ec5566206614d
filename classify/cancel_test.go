package classify_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/vitgo/vit/classify"
	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/internal/testmodel"
)

// TestClassifyFilesNoDecodeAfterCancel: once ctx is canceled (the first
// signal of cmd/eval -images), no further decode starts: the files still
// queued in the loader's batch are not opened, so the stream ends within
// the decodes already running instead of decoding the rest of its batch.
// The cancellation happens as the first decode starts (a hook in the
// Decoder, not a timer); one worker makes every later start ordered after
// it.
func TestClassifyFilesNoDecodeAfterCancel(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	writePNG(t, &buf, testmodel.Colour(0, 20, 20, 1))
	var paths []string
	for i := range 24 { // more than one loader batch of 16
		p := filepath.Join(dir, fmt.Sprintf("%02d.png", i))
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	c := load(t, classify.Options{Workers: 1})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var started, after atomic.Int32
	classify.SetDecodeStarts(t, func(dctx context.Context, name string) {
		if started.Add(1) == 1 {
			cancel()
		} else if dctx.Err() != nil {
			after.Add(1)
		}
	})
	err := c.ClassifyFiles(ctx, paths, func(classify.Result) error { return nil })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("ClassifyFiles = %v, want context.Canceled", err)
	}
	if n := after.Load(); n != 0 {
		t.Fatalf("%d decodes started after the cancellation (%d in all), want none", n, started.Load())
	}
}

// TestDecodeBudgetNoOversize: with NoOversize, an image whose cost is more
// than the whole budget is refused with *classify.OverBudgetError before
// anything is decoded; without it, it takes the whole budget and decodes
// alone.
func TestDecodeBudgetNoOversize(t *testing.T) {
	var buf bytes.Buffer
	writePNG(t, &buf, testmodel.Colour(0, 20, 20, 1)) // costs more than 100 bytes
	for _, tc := range []struct {
		noOversize bool
		refused    bool
	}{{false, false}, {true, true}} {
		budget := data.NewBudget(100)
		img, release, err := classify.Decoder{Budget: budget, NoOversize: tc.noOversize}.Decode(context.Background(), "x", buf.Bytes())
		var ob *classify.OverBudgetError
		if got := errors.As(err, &ob); got != tc.refused || (!tc.refused && (err != nil || img == nil)) {
			t.Errorf("NoOversize %v: %v, want refused %v", tc.noOversize, err, tc.refused)
		}
		if tc.refused && (ob.Budget != 100 || ob.Cost <= 100 || budget.InUse() != 0) {
			t.Errorf("NoOversize: %+v, in use %d", ob, budget.InUse())
		}
		release()
	}
}
