package parallel

import (
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
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

// balance evens a few chunks out over the cores and keeps them aligned.
func TestBalance(t *testing.T) {
	for _, c := range []struct {
		n, size, align, workers int
		wantSize, wantChunks    int
	}{
		{256, 96, 6, 2, 66, 4},    // three chunks of 96 rows on two cores: four of 66
		{256, 96, 6, 1, 256, 1},   // one core: one chunk
		{6304, 792, 6, 2, 792, 8}, // already even
		{100, 200, 1, 2, 100, 1},  // one chunk
		{9, 1, 1, 2, 1, 9},        // nine rounds up to ten, but unit chunks cannot shrink
		{90, 10, 1, 4, 8, 12},     // nine on four cores: twelve of 8 (the last 2)
		{10, 0, 0, 2, 1, 10},      // size and align below one count as one
	} {
		size, chunks := balance(c.n, c.size, c.align, c.workers)
		if size != c.wantSize || chunks != c.wantChunks {
			t.Errorf("balance(%d, %d, %d, %d) = %d, %d; want %d, %d", c.n, c.size, c.align, c.workers, size, chunks, c.wantSize, c.wantChunks)
		}
		if chunks > 1 && (size%max(c.align, 1) != 0 || (chunks-1)*size >= c.n || chunks*size < c.n) {
			t.Errorf("balance(%d, %d, %d, %d) = %d, %d: not an aligned cover of [0, n)", c.n, c.size, c.align, c.workers, size, chunks)
		}
	}
}

// For covers [0, n) exactly once, at one and several cores.
func TestForCoversOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 3, 8} {
		runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, 5, 256, 1000} {
			hits := make([]atomic.Int32, n)
			For(n, 96, 6, func(lo, hi int) {
				for i := lo; i < hi; i++ {
					hits[i].Add(1)
				}
			})
			for i := range hits {
				if h := hits[i].Load(); h != 1 {
					t.Fatalf("GOMAXPROCS %d, n %d: unit %d ran %d times", procs, n, i, h)
				}
			}
		}
	}
}

// ForThen covers [0, n) once and calls then once for each extra chunk, on
// any number of cores, with or without units for body.
func TestForThenCoversOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 3, 8} {
		runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, 5, 256, 1000} {
			for _, extra := range []int{0, 1, 7} {
				hits := make([]atomic.Int32, n)
				thens := make([]atomic.Int32, extra)
				ForThen(n, 96, 6, func(lo, hi int) {
					for i := lo; i < hi; i++ {
						hits[i].Add(1)
					}
				}, extra, func(c int) { thens[c].Add(1) })
				for i := range hits {
					if h := hits[i].Load(); h != 1 {
						t.Fatalf("GOMAXPROCS %d, n %d, extra %d: unit %d ran %d times", procs, n, extra, i, h)
					}
				}
				for c := range thens {
					if h := thens[c].Load(); h != 1 {
						t.Fatalf("GOMAXPROCS %d, n %d, extra %d: then(%d) ran %d times", procs, n, extra, c, h)
					}
				}
			}
		}
	}
}

// Calls from several goroutines at once, calls from inside a body, and
// thousands of calls in a row (the pool's helpers awake or asleep between
// them) all run every chunk exactly once. Run under -race in CI.
func TestRunConcurrentAndNested(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 300 {
				chunks := 1 + (g+i)%9
				calls := make([]atomic.Int32, chunks)
				Run(chunks, func(c int) {
					calls[c].Add(1)
					if c == 0 && i%50 == 0 { // nested
						var inner atomic.Int32
						Run(5, func(int) { inner.Add(1) })
						if inner.Load() != 5 {
							t.Errorf("nested Run ran %d of 5 chunks", inner.Load())
						}
					}
				})
				for c := range calls {
					if n := calls[c].Load(); n != 1 {
						t.Errorf("goroutine %d call %d: chunk %d ran %d times", g, i, c, n)
						return
					}
				}
				if i%100 == 99 {
					time.Sleep(2 * spinFor) // let the helpers fall asleep
				}
			}
		}()
	}
	wg.Wait()
}

// BenchmarkRunAfterSerialWork is one op's parallel pass as a training step
// makes it: 20 µs of serial work (the tape machine, a small op), then eight
// chunks of 100 µs. On two cores the ideal is 420 µs a call; the rest is
// the time the other core takes to join.
func BenchmarkRunAfterSerialWork(b *testing.B) {
	spin := func(d time.Duration) {
		for t := time.Now(); time.Since(t) < d; {
		}
	}
	for b.Loop() {
		spin(20 * time.Microsecond)
		Run(8, func(int) { spin(100 * time.Microsecond) })
	}
}

// For's split covers [0, n) in order without gaps or overlaps, aligned; at
// four chunks or more per core the last core's worth of chunks is cut into
// pieces that halve (a half, a quarter, then eighths) and never grow, with
// fewer the chunks stay whole (the caller's floor).
func TestPlanCutsTheTail(t *testing.T) {
	for _, c := range []struct {
		n, size, align, workers int
		wantChunks, wantLast    int
		wantSizes               []int // the chunks' sizes after the head's, if set
	}{
		// 8 chunks of 792 rows: 6 whole, then 2 of 396, 2 of 198 and the last 364 in pieces of 102
		{6304, 792, 6, 2, 6 + 2 + 2 + 4, 58, []int{396, 396, 198, 198, 102, 102, 102, 58}},
		{1000, 100, 1, 2, 8 + 8, 11, []int{50, 50, 25, 25, 13, 13, 13, 11}},
		{1000, 100, 64, 2, 6 + 4, 40, []int{64, 64, 64, 40}}, // 8 chunks of 128: the quarter's pieces reach n
		{1000, 100, 1, 4, 12, 76, nil},                       // 12 chunks of 84 on 4 cores: 3 a core, left whole
		{256, 66, 6, 2, 4, 58, nil},                          // 4 chunks on 2 cores: whole, so none is under 66 rows
		{192, 96, 6, 2, 2, 96, nil},                          // a small product's floor of 96 rows is kept
		{100, 200, 1, 2, 1, 100, nil},                        // one chunk
		{9, 1, 1, 2, 9, 1, nil},                              // unit chunks
	} {
		p := plan(c.n, c.size, c.align, c.workers)
		prev, last := 0, 0
		var sizes []int
		for i := range p.chunks() {
			lo, hi := p.bounds(i)
			if lo != prev || hi <= lo || hi > c.n || lo%max(c.align, 1) != 0 {
				t.Fatalf("%+v: chunk %d is [%d, %d) after %d", c, i, lo, hi, prev)
			}
			if i >= p.head {
				if len(sizes) > 0 && hi-lo > sizes[len(sizes)-1] {
					t.Errorf("%+v: chunk %d of %d units after one of %d", c, i, hi-lo, sizes[len(sizes)-1])
				}
				sizes = append(sizes, hi-lo)
			}
			prev, last = hi, hi-lo
		}
		if prev != c.n {
			t.Errorf("%+v: chunks end at %d", c, prev)
		}
		if got := p.chunks(); got != c.wantChunks || last != c.wantLast {
			t.Errorf("%+v: %d chunks, the last of %d; want %d, %d", c, got, last, c.wantChunks, c.wantLast)
		}
		if c.wantSizes != nil && !slices.Equal(sizes, c.wantSizes) {
			t.Errorf("%+v: tail pieces %v, want %v", c, sizes, c.wantSizes)
		}
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
