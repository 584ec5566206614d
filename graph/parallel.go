package graph

import "github.com/vitgo/vit/internal/parallel"

// parallelFor runs f(lo, hi) over [0, n), n units of work of similar
// cost (rows, images, (image, head) pairs), split over the cores: about four
// chunks per core, handed out dynamically so that a core slowed by other
// work takes fewer. With one core, or n = 1, it runs inline.
func parallelFor(n int, f func(lo, hi int)) { parallel.ForGrain(n, 1, f) }

// parallelForGrain is parallelFor with chunks of at least grain units, but
// for the last ones, which parallel.For cuts in quarters when there are four
// chunks per core or more: for light units (elements), up to grain units it
// runs inline.
func parallelForGrain(n, grain int, f func(lo, hi int)) { parallel.ForGrain(n, grain, f) }
