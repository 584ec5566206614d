//go:build parallelrecord

package parallel

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// With Record on, Run runs a pass's chunks in order on the calling
// goroutine and reports each chunk's time once the pass is done; a Run
// inside a chunk runs inline as part of it, unreported; stop turns it off.
func TestRecordRunsInlineInOrder(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	var passes []Pass
	stop, err := Record(func(p Pass) { passes = append(passes, p) })
	if err != nil {
		t.Fatal(err)
	}
	var order []int
	Run(5, func(c int) {
		order = append(order, c) // no lock: a chunk on another goroutine would race (go test -race)
		if c == 3 {
			time.Sleep(2 * time.Millisecond)
			Run(3, func(int) { order = append(order, -1) })
		}
	})
	stop()
	if len(passes) != 1 || len(passes[0].Chunks) != 5 {
		t.Fatalf("recorded %d passes %v, want one of 5 chunks", len(passes), passes)
	}
	want := []int{0, 1, 2, 3, -1, -1, -1, 4}
	for i := range want {
		if i >= len(order) || order[i] != want[i] {
			t.Fatalf("chunks ran in order %v, want %v", order, want)
		}
	}
	if d := passes[0].Chunks[3]; d < 2*time.Millisecond {
		t.Errorf("chunk 3 slept 2 ms, recorded %v", d)
	}
	Run(4, func(int) {})
	if len(passes) != 1 {
		t.Errorf("a pass after stop was recorded")
	}
}

// Waited counts the caller's wait for a helper's last chunk. Of two chunks,
// the first to start returns once the other has started, which then takes
// 5 ms: when the caller starts first, as it usually does, it waits about
// 5 ms for the helper. A helper can win the race, so up to 20 tries.
func TestWaitedCountsTheLastChunk(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	w0 := Waited()
	for try := 0; try < 20 && Waited()-w0 < time.Millisecond; try++ {
		var first atomic.Bool
		second := make(chan struct{})
		Run(2, func(int) {
			if first.CompareAndSwap(false, true) {
				<-second
				return
			}
			close(second)
			time.Sleep(5 * time.Millisecond)
		})
	}
	if d := Waited() - w0; d < time.Millisecond {
		t.Errorf("Waited grew by %v over 20 passes whose last chunk took 5 ms", d)
	}
}
