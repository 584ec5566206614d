package dist

import (
	"fmt"
	"sync"
)

// NewLocal returns the n ranks of a job that lives inside this process, one
// Comm per rank, each to be used by its own goroutine. Sums are taken in rank
// order, so results are deterministic. Abort on one rank makes every pending
// and later collective of the others return an *AbortError.
func NewLocal(n int) ([]Comm, error) {
	if n < 1 {
		return nil, fmt.Errorf("dist: NewLocal: need at least one rank, got %d", n)
	}
	h := &hub{n: n, bufs: make([]any, n)}
	h.cond = sync.NewCond(&h.mu)
	cs := make([]Comm, n)
	for r := range cs {
		cs[r] = &local{h: h, rank: r}
	}
	return cs, nil
}

// hub is the meeting point of NewLocal's ranks.
type hub struct {
	n       int
	mu      sync.Mutex
	cond    *sync.Cond
	gen     uint64 // completed collectives
	arrived int
	op      string
	root    int
	bufs    []any
	// mismatch: the ranks of this collective called different operations
	// or roots
	mismatch bool
	err      error // the failure of the collective of generation gen
	abort    *AbortError
}

type local struct {
	h    *hub
	rank int
}

func (c *local) Rank() int { return c.rank }
func (c *local) Size() int { return c.h.n }

func (c *local) AllreduceFloat32(b []float32) error { return c.h.do(c.rank, "allreduce/f32", 0, b) }
func (c *local) AllreduceFloat64(b []float64) error { return c.h.do(c.rank, "allreduce/f64", 0, b) }
func (c *local) AllreduceInt64(b []int64) error     { return c.h.do(c.rank, "allreduce/i64", 0, b) }
func (c *local) BcastFloat32(b []float32, r int) error {
	return c.h.do(c.rank, "bcast/f32", r, b)
}
func (c *local) BcastInt64(b []int64, r int) error { return c.h.do(c.rank, "bcast/i64", r, b) }
func (c *local) BcastBytes(b []byte, r int) error  { return c.h.do(c.rank, "bcast/u8", r, b) }
func (c *local) Barrier() error                    { return c.h.do(c.rank, "barrier", 0, []byte(nil)) }

func (c *local) Abort(code int) {
	h := c.h
	h.mu.Lock()
	if h.abort == nil {
		h.abort = &AbortError{Rank: c.rank, Code: code}
	}
	h.mu.Unlock()
	h.cond.Broadcast()
}

// do enters rank's side of one collective and waits for the others; the last
// rank to arrive carries it out for all.
func (h *hub) do(rank int, op string, root int, buf any) error {
	if err := checkRoot(root, h.n); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.abort != nil {
		return h.abort
	}
	if h.arrived == 0 {
		h.op, h.root, h.mismatch = op, root, false
	} else if op != h.op || root != h.root {
		h.mismatch = true
	}
	h.bufs[rank] = buf
	h.arrived++
	gen := h.gen
	if h.arrived == h.n {
		h.err = h.apply()
		clear(h.bufs)
		h.arrived = 0
		h.gen++
		h.cond.Broadcast()
		return h.err
	}
	for h.gen == gen && h.abort == nil {
		h.cond.Wait()
	}
	if h.gen == gen {
		return h.abort
	}
	return h.err
}

// apply carries out the collective whose buffers are all in h.bufs.
func (h *hub) apply() error {
	bad := false
	for _, b := range h.bufs {
		bad = bad || lenOf(b) != lenOf(h.bufs[0]) || fmt.Sprintf("%T", b) != fmt.Sprintf("%T", h.bufs[0])
	}
	if bad || h.mismatch {
		return fmt.Errorf("%w (first caller: %s; buffer lengths, types, operations or roots differ)", ErrMismatch, h.op)
	}
	switch h.op {
	case "allreduce/f32":
		sumInto[float32](h.bufs)
	case "allreduce/f64":
		sumInto[float64](h.bufs)
	case "allreduce/i64":
		sumInto[int64](h.bufs)
	case "bcast/f32":
		bcast[float32](h.bufs, h.root)
	case "bcast/i64":
		bcast[int64](h.bufs, h.root)
	case "bcast/u8":
		bcast[byte](h.bufs, h.root)
	}
	return nil
}

func lenOf(b any) int {
	switch b := b.(type) {
	case []float32:
		return len(b)
	case []float64:
		return len(b)
	case []int64:
		return len(b)
	case []byte:
		return len(b)
	}
	return -1
}

// sumInto sums the buffers element-wise in rank order into every buffer.
func sumInto[T float32 | float64 | int64](bufs []any) {
	first := bufs[0].([]T)
	sum := make([]T, len(first))
	for _, b := range bufs {
		for i, v := range b.([]T) {
			sum[i] += v
		}
	}
	for _, b := range bufs {
		copy(b.([]T), sum)
	}
}

func bcast[T float32 | int64 | byte](bufs []any, root int) {
	src := bufs[root].([]T)
	for _, b := range bufs {
		copy(b.([]T), src)
	}
}
