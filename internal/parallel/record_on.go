//go:build parallelrecord

package parallel

import (
	"sync/atomic"
	"time"
)

// Recording says whether this build has the recording hooks (the build tag
// parallelrecord): Record works, and Waited and Polled count.
const Recording = true

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
func Record(f func(Pass)) (stop func(), err error) {
	recorder.Store(&f)
	return func() { recorder.Store(nil) }, nil
}

// recordRun runs a pass recorded when Record is on, and reports whether it
// did.
func recordRun(chunks int, body func(c int)) bool {
	rec := recorder.Load()
	if rec == nil {
		return false
	}
	runRecorded(chunks, body, *rec)
	return true
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

// waited is the time callers of Run spent waiting for the helpers' last
// chunks, in nanoseconds.
var waited atomic.Int64

func addWaited(d time.Duration) { waited.Add(int64(d)) }

// Waited returns the time callers of Run (through the pool) have spent so
// far waiting, their own chunks done, for the helpers to finish theirs: the
// one core's worth of idle time at the end of every parallel pass.
func Waited() time.Duration { return time.Duration(waited.Load()) }

// polled is the time spent in spinUntil, in nanoseconds.
var polled atomic.Int64

func addPolled(d time.Duration) { polled.Add(int64(d)) }

// Polled returns the time helpers and callers have spent polling for work
// or for the last chunks so far, summed over goroutines. That time is CPU
// time but not work: a measurement of busy cores subtracts it.
func Polled() time.Duration { return time.Duration(polled.Load()) }
