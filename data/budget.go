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
// consumed. The loader's workers wait for their turn (Acquire), first come
// first served: a waiter is admitted only after every earlier one, so a
// large decode is not starved by a stream of small ones. A server may wait
// under a deadline or refuse at once (TryAcquire). A cost above the whole
// budget takes all of it, so one image within the limits always decodes,
// alone.
type Budget struct {
	mu    sync.Mutex
	total int64
	used  int64
	queue []*budgetWaiter // waiting Acquires, oldest first
}

// budgetWaiter is an Acquire waiting for n bytes; ready is closed once
// they are its.
type budgetWaiter struct {
	n     int64
	ready chan struct{}
}

// NewBudget returns a budget of total bytes (at least 1).
func NewBudget(total int64) *Budget {
	return &Budget{total: max(total, 1)}
}

// Total returns the budget's size in bytes.
func (b *Budget) Total() int64 { return b.total }

// InUse returns the bytes currently taken.
func (b *Budget) InUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// Waiting returns the number of Acquires waiting for their turn.
func (b *Budget) Waiting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.queue)
}

// grant is what a cost of n takes: n, or the whole budget if n is larger.
func (b *Budget) grant(n int64) int64 { return min(max(n, 0), b.total) }

// Acquire waits until n bytes are free and every earlier waiter has been
// served (or ctx ends), and takes them; it returns what it took, to give
// back with Release. A ctx that has already ended takes nothing, even when
// the bytes are free: nothing starts after a cancellation.
func (b *Budget) Acquire(ctx context.Context, n int64) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	n = b.grant(n)
	b.mu.Lock()
	if len(b.queue) == 0 && b.used+n <= b.total {
		b.used += n
		b.mu.Unlock()
		return n, nil
	}
	w := &budgetWaiter{n: n, ready: make(chan struct{})}
	b.queue = append(b.queue, w)
	b.mu.Unlock()
	select {
	case <-w.ready:
		return n, nil
	case <-ctx.Done():
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-w.ready: // granted as ctx ended: give it back
		b.used -= n
	default:
		for i, q := range b.queue {
			if q == w {
				b.queue = append(b.queue[:i], b.queue[i+1:]...)
				break
			}
		}
	}
	b.admitLocked() // the waiters behind w may fit now
	return 0, ctx.Err()
}

// TryAcquire takes n bytes if they are free now and nobody is waiting for
// them, else returns ErrBudgetBusy.
func (b *Budget) TryAcquire(n int64) (int64, error) {
	n = b.grant(n)
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.queue) > 0 || b.used+n > b.total {
		return 0, ErrBudgetBusy
	}
	b.used += n
	return n, nil
}

// Release gives back n bytes taken by Acquire or TryAcquire and admits the
// waiters that now fit, in order; on a nil Budget it does nothing.
func (b *Budget) Release(n int64) {
	if b == nil || n <= 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	b.admitLocked()
	b.mu.Unlock()
}

// admitLocked hands bytes to the oldest waiters while they fit.
func (b *Budget) admitLocked() {
	for len(b.queue) > 0 && b.used+b.queue[0].n <= b.total {
		w := b.queue[0]
		b.queue = b.queue[1:]
		b.used += w.n
		close(w.ready)
	}
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
// the memory this process may still take when first used (meminfo.Free:
// the smallest of MemAvailable, the cgroup's limit, and RLIMIT_AS and
// RLIMIT_DATA less the address space and data already in use), at least
// one image at the default limits unless a resource limit is the
// tightest (the kernel fails an allocation past it: a decode that does not
// fit must not be started, see classify's Decoder.NoOversize).
func SharedBudget() *Budget {
	sharedOnce.Do(func() {
		total := int64(DefaultBudgetBytes)
		l := meminfo.Tightest()
		if l.Free > 0 {
			total = l.Free / 2
		}
		if l.Limit == 0 {
			total = max(total, MaxDecodedBytes(DefaultMaxPixels)+3*DefaultMaxPixels)
		}
		sharedBudget = NewBudget(total)
	})
	return sharedBudget
}
