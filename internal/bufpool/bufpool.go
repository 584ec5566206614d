package bufpool

import (
	"math/bits"
	"runtime"
	"sync"
)

// A Pool lends buffers of T. The zero Pool is ready to use.
type Pool[T any] struct {
	mu   sync.Mutex
	free map[int][]*[]T // by ClassSize
}

// Keep is the most buffers of one class a Pool keeps: one per core and a
// few that the calling goroutine holds at once.
func Keep() int { return 2*runtime.GOMAXPROCS(0) + 4 }

// ClassSize is the capacity of the buffers that serve a request of n
// elements: n rounded up to a multiple of 2^(e−4), an eighth of 2^(e−1),
// where 2^(e−1) < n ≤ 2^e (n itself up to 8; 1 for n < 1).
func ClassSize(n int) int {
	if n <= 8 {
		return max(n, 1)
	}
	q := 1 << (bits.Len(uint(n-1)) - 4)
	return (n + q - 1) / q * q
}

// Get returns a buffer of n elements (capacity ClassSize(n)), whatever they
// hold. Give it back with Put.
func (p *Pool[T]) Get(n int) *[]T {
	c := ClassSize(n)
	p.mu.Lock()
	if l := p.free[c]; len(l) > 0 {
		buf := l[len(l)-1]
		p.free[c] = l[:len(l)-1]
		p.mu.Unlock()
		*buf = (*buf)[:n]
		return buf
	}
	p.mu.Unlock()
	b := make([]T, n, c)
	return &b
}

// Put gives back a buffer of Get; it is dropped when its class already
// keeps Keep() buffers.
func (p *Pool[T]) Put(buf *[]T) {
	c := cap(*buf)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.free == nil {
		p.free = map[int][]*[]T{}
	}
	if len(p.free[c]) < Keep() {
		p.free[c] = append(p.free[c], buf)
	}
}

// kept is the number of buffers of class c the pool holds (tests).
func (p *Pool[T]) kept(c int) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.free[c])
}
