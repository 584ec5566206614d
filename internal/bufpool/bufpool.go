package bufpool

import (
	"math/bits"
	"runtime"
	"sync/atomic"
)

// A Pool lends buffers of T. The zero Pool is ready to use, and any number
// of goroutines may use it at once.
type Pool[T any] struct {
	classes [numClasses]atomic.Pointer[[]atomic.Pointer[[]T]] // by classIndex: Keep slots, nil where empty
}

// numClasses is the number of size classes of an int's range: 8 below 9,
// then 8 per power of two from 16 (classIndex).
const numClasses = 8 + 8*(bits.UintSize-4)

// Keep is the most buffers of one class a Pool keeps: two per core and a
// few that the calling goroutine holds at once. A class takes its number
// when its first buffer comes back; the larger of GOMAXPROCS and the
// CPUs counts the cores, so a later change of GOMAXPROCS is covered.
func Keep() int { return 2*max(runtime.GOMAXPROCS(0), runtime.NumCPU()) + 4 }

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

// classIndex numbers ClassSize(n)'s class: 0 to 7 for the sizes 1 to 8,
// then 8 per e (2^(e−1) < n ≤ 2^e, e ≥ 4), one per multiple of 2^(e−4)
// from 9 to 16 of them.
func classIndex(n int) int {
	if n <= 8 {
		return max(n, 1) - 1
	}
	e := bits.Len(uint(n - 1))
	q := 1 << (e - 4)
	return 8 + 8*(e-4) + (n-1)/q + 1 - 9
}

// Get returns a buffer of n elements (capacity ClassSize(n)), whatever they
// hold. Give it back with Put.
func (p *Pool[T]) Get(n int) *[]T {
	if slots := p.classes[classIndex(n)].Load(); slots != nil {
		for i := range *slots {
			s := &(*slots)[i]
			if buf := s.Load(); buf != nil && s.CompareAndSwap(buf, nil) {
				*buf = (*buf)[:n]
				return buf
			}
		}
	}
	b := make([]T, n, ClassSize(n))
	return &b
}

// Put gives back a buffer from Get, for a later Get of its class to take.
// A class keeps at most Keep buffers (it drops the others for the
// collector), and a buffer whose capacity is not a class's is dropped too.
// Each slot is taken and freed by one atomic swap, so no goroutine waits
// for another.
func (p *Pool[T]) Put(buf *[]T) {
	c := cap(*buf)
	if c == 0 || ClassSize(c) != c {
		return
	}
	class := &p.classes[classIndex(c)]
	slots := class.Load()
	if slots == nil {
		fresh := make([]atomic.Pointer[[]T], Keep())
		class.CompareAndSwap(nil, &fresh) // or another Put's came first
		slots = class.Load()
	}
	for i := range *slots {
		s := &(*slots)[i]
		if s.Load() == nil && s.CompareAndSwap(nil, buf) {
			return
		}
	}
}

// kept counts the buffers of class c (a ClassSize) that p holds.
func (p *Pool[T]) kept(c int) int {
	slots := p.classes[classIndex(c)].Load()
	if slots == nil {
		return 0
	}
	n := 0
	for i := range *slots {
		if (*slots)[i].Load() != nil {
			n++
		}
	}
	return n
}
