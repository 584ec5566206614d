package classify

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"io"

	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/internal/regfile"
)

// Decoder decodes PNG, JPEG and GIF images within the limits of the data
// package: data.CheckEncoded refuses, from the header and before any pixel
// is decoded, an image over MaxPixels pixels (*TooLargeError), over the
// decoded-bytes limit (*data.DecodedTooLargeError), or claiming more pixels
// than its bytes can hold (*data.ImplausibleSizeError); then the decode
// takes its cost from Budget and keeps it until release is called.
type Decoder struct {
	MaxPixels int64        // 0 = DefaultMaxPixels
	Budget    *data.Budget // nil = data.SharedBudget()
	// NoWait refuses with data.ErrBudgetBusy when the budget is in use,
	// instead of waiting for it (a server answers 503).
	NoWait bool
	// NoOversize refuses with *OverBudgetError an image whose cost is more
	// than the whole budget, instead of letting it take all of the budget
	// and decode alone: where the budget is what the memory limits leave,
	// such a decode would run out of memory.
	NoOversize bool
}

// OverBudgetError refuses an image whose decode needs more memory (its
// data.Header.Cost) than the whole decode budget (Decoder.NoOversize).
type OverBudgetError struct {
	Name         string
	Cost, Budget int64
}

func (e *OverBudgetError) Error() string {
	return fmt.Sprintf("image %s needs %d bytes to decode, more than the whole decode budget of %d bytes", e.Name, e.Cost, e.Budget)
}

// Decode decodes the encoded image b; name is used in errors. release gives
// the budget back and must be called once img is no longer needed (it is
// a no-op after an error).
//
// ctx ends a wait for the budget and the decode itself: a ctx that has
// ended starts no decode, and one ending mid-decode stops it at its next
// read of b (its error wraps ctx's).
func (d Decoder) Decode(ctx context.Context, name string, b []byte) (img image.Image, release func(), err error) {
	release = func() {}
	if err := ctx.Err(); err != nil {
		return nil, release, err
	}
	hdr, err := data.CheckEncoded(name, b, d.MaxPixels)
	if err != nil {
		return nil, release, err
	}
	budget := d.Budget
	if budget == nil {
		budget = data.SharedBudget()
	}
	if d.NoOversize && hdr.Cost > budget.Total() {
		return nil, release, &OverBudgetError{Name: name, Cost: hdr.Cost, Budget: budget.Total()}
	}
	var held int64
	if d.NoWait {
		held, err = budget.TryAcquire(hdr.Cost)
	} else {
		held, err = budget.Acquire(ctx, hdr.Cost)
	}
	if err != nil {
		return nil, release, err
	}
	if decodeStarts != nil {
		decodeStarts(ctx, name)
	}
	img, _, err = image.Decode(&ctxReader{ctx: ctx, r: bytes.NewReader(b)})
	if err != nil {
		budget.Release(held)
		if cerr := ctx.Err(); cerr != nil {
			return nil, release, fmt.Errorf("decode stopped: %w", cerr)
		}
		return nil, release, fmt.Errorf("decode: %w", err)
	}
	return img, func() { budget.Release(held) }, nil
}

// decodeStarts, if set (by a test), is called as each decode starts, after
// its budget is taken.
var decodeStarts func(ctx context.Context, name string)

// ctxReader reads r until ctx ends, then fails with ctx's error: a decode
// reading through it stops within one buffer of its input.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// DecodeFile decodes the image file at path, refusing anything but a
// regular file (*regfile.NotRegularError: a FIFO is never opened for a
// blocking read) and a file larger than the decoded-bytes limit.
func (d Decoder) DecodeFile(ctx context.Context, path string) (image.Image, func(), error) {
	if err := ctx.Err(); err != nil {
		return nil, func() {}, err // not even opened after a cancellation
	}
	f, st, err := regfile.Open(path)
	if err != nil {
		return nil, func() {}, err
	}
	defer f.Close()
	if limit := data.MaxDecodedBytes(d.MaxPixels); st.Size() > limit {
		return nil, func() {}, fmt.Errorf("the file has %d bytes, more than the decoded-bytes limit %d", st.Size(), limit)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, func() {}, err
	}
	return d.Decode(ctx, path, b)
}

// Decode decodes a PNG, JPEG or GIF image with a Decoder of maxPixels and
// the shared budget, waiting for it, and gives the budget back on return;
// see Decoder for what it refuses before decoding.
func Decode(name string, r io.Reader, maxPixels int64) (image.Image, error) {
	b, err := io.ReadAll(io.LimitReader(r, data.MaxDecodedBytes(maxPixels)+1))
	if err != nil {
		return nil, err
	}
	if limit := data.MaxDecodedBytes(maxPixels); int64(len(b)) > limit {
		return nil, fmt.Errorf("%s has more than %d bytes, the decoded-bytes limit", name, limit)
	}
	img, release, err := Decoder{MaxPixels: maxPixels}.Decode(context.Background(), name, b)
	release()
	return img, err
}
