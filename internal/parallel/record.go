package parallel

import (
	"sync/atomic"
	"time"
)

// Pass is one parallel pass as Record saw it: the time each of its chunks
// took, in chunk order, run one after another on the calling goroutine.
type Pass struct {
	Chunks []time.Duration
}

// Total is the pass's work: the sum of its chunks' times.
func (p Pass) Total() time.Duration {
	var t time.Duration
	for _, d := range p.Chunks {
		t += d
	}
	return t
}

// Makespan is how long the pass takes on workers cores that take its chunks
// as Run hands them out: in order, each to the first core that is free
// (Run's shared counter), all starting together; no core waits for work,
// and no hand-off costs anything. It is the split's own limit, before
// memory bandwidth and wake-ups.
func (p Pass) Makespan(workers int) time.Duration {
	workers = max(1, min(workers, len(p.Chunks)))
	free := make([]time.Duration, workers)
	for _, d := range p.Chunks {
		first := 0
		for i, f := range free {
			if f < free[first] {
				first = i
			}
		}
		free[first] += d
	}
	var span time.Duration
	for _, f := range free {
		span = max(span, f)
	}
	return span
}

// recorder is the function Record installed, or nil.
var recorder atomic.Pointer[func(Pass)]

// Record makes every later call of Run from outside a chunk run its chunks
// one after another on the calling goroutine, timing each, and hand the
// times to f once the pass is done; stop undoes it. Calls from inside a
// chunk, or from another goroutine while a pass runs, run inline too, inside
// the timed chunk or unrecorded. The chunks are those GOMAXPROCS would give,
// so a process at GOMAXPROCS n on any machine records n cores' split of the
// work, each chunk timed alone on one core: what Makespan(n) turns into a
// projection of the pass on n cores (experiments/bench -simulate).
func Record(f func(Pass)) (stop func()) {
	recorder.Store(&f)
	return func() { recorder.Store(nil) }
}

// runRecorded is Run while Record is on.
func runRecorded(chunks int, body func(c int), rec func(Pass)) {
	if !pool.mu.TryLock() {
		for c := 0; c < chunks; c++ {
			body(c)
		}
		return
	}
	defer pool.mu.Unlock()
	p := Pass{Chunks: make([]time.Duration, chunks)}
	for c := range p.Chunks {
		start := time.Now()
		body(c)
		p.Chunks[c] = time.Since(start)
	}
	rec(p)
}
