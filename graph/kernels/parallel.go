package kernels

import (
	"runtime"

	"github.com/vitgo/vit/internal/parallel"
)

// parallelFor runs body(lo, hi) over [0, n) split into chunks of about
// grain elements (a multiple of align), on up to GOMAXPROCS goroutines,
// the calling one included. Chunks are handed out dynamically so a core
// busy with other work slows the call down less.
func parallelFor(n, grain, align int, body func(lo, hi int)) {
	workers := runtime.GOMAXPROCS(0)
	if n <= 0 {
		return
	}
	if grain < align {
		grain = align
	}
	grain = (grain + align - 1) / align * align
	chunks := (n + grain - 1) / grain
	if workers <= 1 || chunks <= 1 {
		body(0, n)
		return
	}
	parallel.Run(chunks, func(i int) {
		lo := i * grain
		body(lo, min(lo+grain, n))
	})
}

// splitGrain picks a chunk size for n units of work over the available
// cores: about perWorker chunks per worker, each at least minGrain units.
func splitGrain(n, perWorker, minGrain int) int {
	w := runtime.GOMAXPROCS(0) * perWorker
	g := (n + w - 1) / w
	if g < minGrain {
		g = minGrain
	}
	return g
}
