package graph

import "sync"

// rowsPool lends the large scratch buffers of the ops that run one after
// another in a graph (a chunk of a Linear's rows, GELU(u)'s words): a short
// free list under a mutex. Unlike a sync.Pool, any goroutine takes back
// what another put (a sync.Pool keeps a buffer in the putting P's private
// slot, where a Get on another P misses it and allocates again), and a
// collection does not empty it: the same buffers serve every step.
type rowsPool[T any] struct {
	mu   sync.Mutex
	free []*[]T
}

// rowsPoolKeep is the most buffers a rowsPool keeps; put drops the
// smallest beyond it.
const rowsPoolKeep = 4

// get returns a buffer of n elements, whatever they hold: the smallest
// free one that is large enough, else a new one.
func (p *rowsPool[T]) get(n int) *[]T {
	p.mu.Lock()
	best := -1
	for i, b := range p.free {
		if cap(*b) >= n && (best < 0 || cap(*b) < cap(*p.free[best])) {
			best = i
		}
	}
	if best >= 0 {
		b := p.free[best]
		p.free = append(p.free[:best], p.free[best+1:]...)
		p.mu.Unlock()
		*b = (*b)[:n]
		return b
	}
	p.mu.Unlock()
	b := make([]T, n)
	return &b
}

// put gives back a buffer of get.
func (p *rowsPool[T]) put(b *[]T) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.free = append(p.free, b)
	if len(p.free) > rowsPoolKeep {
		small := 0
		for i, f := range p.free {
			if cap(*f) < cap(*p.free[small]) {
				small = i
			}
		}
		p.free = append(p.free[:small], p.free[small+1:]...)
	}
}
