package parallel

import (
	"runtime"
	"sync/atomic"
	"testing"
)

// TestRunCallsEveryChunkOnce checks that every chunk runs exactly once, at
// one and at several cores, for chunk counts around the worker count.
func TestRunCallsEveryChunkOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 8} {
		runtime.GOMAXPROCS(procs)
		for _, chunks := range []int{0, 1, 2, 3, 7, 100} {
			calls := make([]atomic.Int32, chunks)
			Run(chunks, func(c int) { calls[c].Add(1) })
			for c := range calls {
				if n := calls[c].Load(); n != 1 {
					t.Fatalf("GOMAXPROCS %d, %d chunks: chunk %d ran %d times", procs, chunks, c, n)
				}
			}
		}
	}
}

// TestRunInOrderOnOneCore checks that one core runs the chunks in order on
// the calling goroutine (the serial path the bit-identity tests rely on).
func TestRunInOrderOnOneCore(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var got []int
	Run(5, func(c int) { got = append(got, c) })
	for i, c := range got {
		if c != i {
			t.Fatalf("order %v", got)
		}
	}
	if len(got) != 5 {
		t.Fatalf("ran %d chunks, want 5", len(got))
	}
}
