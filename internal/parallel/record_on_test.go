//go:build parallelrecord

package parallel

import (
	"runtime"
	"strings"
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

// Waited counts the caller's wait for a helper's last chunk. The caller's
// chunk (told apart by its goroutine) returns once the helper's has started
// and told it so; the helper's then sleeps 20 ms, so the caller, its own
// chunk done, waits for it, whichever chunk each took. Only a caller held
// up for 19 ms between returning from its chunk and starting its clock, on
// each of 20 passes, would see less than the 1 ms asked.
func TestWaitedCountsTheLastChunk(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	caller := goroutineID()
	w0 := Waited()
	for try := 0; try < 20 && Waited()-w0 < time.Millisecond; try++ {
		helperIn, callerOut := make(chan struct{}), make(chan struct{})
		Run(2, func(int) {
			if goroutineID() == caller {
				<-helperIn
				close(callerOut)
				return
			}
			close(helperIn)
			<-callerOut
			time.Sleep(20 * time.Millisecond)
		})
	}
	if d := Waited() - w0; d < time.Millisecond {
		t.Errorf("Waited grew by %v over passes whose helper's chunk took 20 ms after the caller's", d)
	}
}

// goroutineID returns the calling goroutine's number, from its stack
// trace's first line ("goroutine 7 [running]:").
func goroutineID() string {
	buf := make([]byte, 64)
	return strings.Fields(string(buf[:runtime.Stack(buf, false)]))[1]
}
