package data

import (
	"context"
	"errors"
	"sync"

	"github.com/vitgo/vit/internal/meminfo"
)

// ErrBudgetBusy is returned by Budget.TryAcquire when the bytes are not
// free now: a server answers 503 rather than queue the request.
var ErrBudgetBusy = errors.New("data: the decode memory budget is in use; try again later")

// Budget bounds the memory of image decodes in flight: each decode takes
// its Header.Cost before it starts and gives it back when its pixels are
// consumed. The loader's workers wait for their turn (Acquire); a server
// refuses at once (TryAcquire). A cost above the whole budget takes all of
// it, so one image within the limits always decodes, alone.
type Budget struct {
	mu    sync.Mutex
	total int64
	used  int64
	wake  chan struct{} // closed and replaced when bytes are released
}

// NewBudget returns a budget of total bytes (at least 1).
func NewBudget(total int64) *Budget {
	return &Budget{total: max(total, 1), wake: make(chan struct{})}
}

// Total returns the budget's size in bytes.
func (b *Budget) Total() int64 { return b.total }

// InUse returns the bytes currently taken.
func (b *Budget) InUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// grant is what a cost of n takes: n, or the whole budget if n is larger.
func (b *Budget) grant(n int64) int64 { return min(max(n, 0), b.total) }

// Acquire waits until n bytes are free (or ctx ends) and takes them; it
// returns what it took, to give back with Release.
func (b *Budget) Acquire(ctx context.Context, n int64) (int64, error) {
	n = b.grant(n)
	for {
		b.mu.Lock()
		if b.used+n <= b.total {
			b.used += n
			b.mu.Unlock()
			return n, nil
		}
		wake := b.wake
		b.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

// TryAcquire takes n bytes if they are free now, else returns ErrBudgetBusy.
func (b *Budget) TryAcquire(n int64) (int64, error) {
	n = b.grant(n)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.total {
		return 0, ErrBudgetBusy
	}
	b.used += n
	return n, nil
}

// Release gives back n bytes taken by Acquire or TryAcquire; on a nil
// Budget it does nothing.
func (b *Budget) Release(n int64) {
	if b == nil || n <= 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	close(b.wake)
	b.wake = make(chan struct{})
	b.mu.Unlock()
}

var (
	sharedOnce   sync.Once
	sharedBudget *Budget
)

// DefaultBudgetBytes is the shared budget's size when the machine's free
// memory cannot be read.
const DefaultBudgetBytes = 1 << 30

// SharedBudget is the process's decode budget, used by folder data sets,
// classify and the example server unless they are given their own: half
// the memory available when first used (meminfo.Available), at least one
// image at the default limits.
func SharedBudget() *Budget {
	sharedOnce.Do(func() {
		total := int64(DefaultBudgetBytes)
		if have, _ := meminfo.Available(); have > 0 {
			total = have / 2
		}
		least := MaxDecodedBytes(DefaultMaxPixels) + 3*DefaultMaxPixels
		sharedBudget = NewBudget(max(total, least))
	})
	return sharedBudget
}
