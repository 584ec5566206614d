package parallel

import (
	"errors"
	"time"
)

// The recording hooks (Record, Waited, Polled) are for experiments/bench's
// scaling sweeps and simulation. They are built only with the build tag
// parallelrecord (record_on.go); the default build (record_off.go) compiles
// them out of Run and its polling loop, so a pass costs nothing for them,
// and Record returns ErrNotRecording, Waited and Polled 0.

// ErrNotRecording is Record's error in a build without the tag
// parallelrecord.
var ErrNotRecording = errors.New("parallel: recording needs a build with -tags parallelrecord")

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
