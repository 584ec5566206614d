package kernels

import (
	"runtime"

	"github.com/vitgo/vit/internal/parallel"
)

// parallelFor runs body(lo, hi) over [0, n) split into chunks of about
// grain elements (a multiple of align), evened out over up to GOMAXPROCS
// goroutines, the calling one included (parallel.For).
func parallelFor(n, grain, align int, body func(lo, hi int)) {
	parallel.For(n, grain, align, body)
}

// forRange runs body(lo, hi) over [0, n): as parallelFor with grain when
// par, else in one call on the calling goroutine.
func forRange(par bool, n, grain int, body func(lo, hi int)) {
	if par {
		parallelFor(n, grain, 1, body)
		return
	}
	body(0, n)
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

// parallelForThen is parallelFor followed, in the same pass, by then(c) for
// every c in [0, extra), which the cores take as they run out of body's
// chunks (parallel.ForThen).
func parallelForThen(n, grain, align int, body func(lo, hi int), extra int, then func(c int)) {
	parallel.ForThen(n, grain, align, body, extra, then)
}
