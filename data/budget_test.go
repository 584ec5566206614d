package data

import (
	"context"
	"errors"
	"runtime"
	"testing"
)

// waitQueued returns once n Acquires wait on b: an event, not a sleep (the
// waiter is queued under b's lock before it blocks).
func waitQueued(t *testing.T, b *Budget, n int) {
	t.Helper()
	for b.Waiting() < n {
		select {
		case <-t.Context().Done():
			t.Fatalf("%d waiters, want %d", b.Waiting(), n)
		default:
		}
		runtime.Gosched()
	}
}

// TestBudgetFIFO: waiters are admitted in their order of arrival: a small
// request arriving after a large one waits behind it even where its bytes
// are free, so a stream of small decodes cannot starve a large one; a
// waiter whose context ends leaves the queue and lets the next in.
func TestBudgetFIFO(t *testing.T) {
	b := NewBudget(100)
	held, _ := b.Acquire(context.Background(), 60)
	order := make(chan string, 3)
	acq := func(name string, ctx context.Context, n int64) {
		if _, err := b.Acquire(ctx, n); err != nil {
			order <- name + ": " + err.Error()
			return
		}
		order <- name
	}
	go acq("large", context.Background(), 95) // does not fit until the 60 are back
	waitQueued(t, b, 1)
	if _, err := b.TryAcquire(10); !errors.Is(err, ErrBudgetBusy) {
		t.Fatalf("TryAcquire(10) with a waiter ahead = %v, want ErrBudgetBusy", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go acq("canceled", ctx, 10)
	waitQueued(t, b, 2)
	go acq("small", context.Background(), 10) // fits now, but arrives last
	waitQueued(t, b, 3)
	cancel()
	if got := <-order; got != "canceled: "+context.Canceled.Error() {
		t.Fatalf("first = %q, want the canceled waiter's error", got)
	}
	b.Release(held)
	if got := <-order; got != "large" {
		t.Fatalf("after the release, %q was admitted first, want large", got)
	}
	if b.InUse() != 95 || b.Waiting() != 1 {
		t.Fatalf("in use %d, waiting %d; want 95 (large), 1 (small)", b.InUse(), b.Waiting())
	}
	b.Release(95)
	if got := <-order; got != "small" {
		t.Fatalf("then %q, want small", got)
	}
}

// TestBudgetCanceledTakesNothing: an Acquire under a context that has
// ended takes nothing even when the bytes are free, so no decode starts
// after a cancellation.
func TestBudgetCanceledTakesNothing(t *testing.T) {
	b := NewBudget(100)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if n, err := b.Acquire(ctx, 10); !errors.Is(err, context.Canceled) || n != 0 || b.InUse() != 0 {
		t.Fatalf("Acquire(canceled) = %d, %v, in use %d; want 0, context.Canceled, 0", n, err, b.InUse())
	}
}
