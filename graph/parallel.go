package graph

import (
	"runtime"
	"sync"
)

// parallelFor runs f(lo, hi) over [0, n) split into one contiguous chunk per
// core; with one core, or little work, it runs inline.
func parallelFor(n int, f func(lo, hi int)) {
	w := runtime.GOMAXPROCS(0)
	if w > n {
		w = n
	}
	if w <= 1 {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	for i := 0; i < w; i++ {
		lo, hi := i*n/w, (i+1)*n/w
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(lo, hi)
		}()
	}
	wg.Wait()
}
