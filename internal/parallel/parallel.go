// Package parallel runs numbered chunks of work on every core. It is the one
// worker loop behind the kernels', the graph ops' and the optimizer's
// parallel passes; each of those keeps its own rule for cutting the work
// into chunks.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Run calls body(c) once for every chunk c in [0, chunks), on up to
// GOMAXPROCS goroutines, the calling one included. Chunks are handed out
// dynamically, so a core slowed by other work takes fewer. With one core or
// one chunk it runs the chunks in order on the calling goroutine. Run
// returns when every call has returned.
func Run(chunks int, body func(c int)) {
	workers := min(runtime.GOMAXPROCS(0), chunks)
	if workers <= 1 {
		for c := 0; c < chunks; c++ {
			body(c)
		}
		return
	}
	var next atomic.Int64
	run := func() {
		for {
			c := int(next.Add(1)) - 1
			if c >= chunks {
				return
			}
			body(c)
		}
	}
	var wg sync.WaitGroup
	wg.Add(workers - 1)
	for range workers - 1 {
		go func() {
			defer wg.Done()
			run()
		}()
	}
	run()
	wg.Wait()
}
