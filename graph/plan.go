package graph

import (
	"fmt"
	"sort"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// An Arena is memory that the outputs of our ops share when their lifetimes
// do not overlap. PlanBuffers fills it from a graph's execution order: an
// activation is dead once the last instruction that reads it has run, so a
// later op may write into the same memory. Graphs that never run at the same
// time (a training graph and its evaluation graph) can share one arena.
//
// Without a plan every op owns its output for the whole run, which is what
// the tape needs but about twice the memory a training step needs: the
// backward pass's gradients live for a block or two, not for the step.
type Arena struct {
	slots map[tensor.Dtype][]*slot
}

// NewArena returns an empty arena.
func NewArena() *Arena { return &Arena{slots: map[tensor.Dtype][]*slot{}} }

// Bytes is the memory the arena's slots take once every slot has been used.
func (a *Arena) Bytes() int64 {
	var n int64
	for dt, ss := range a.slots {
		for _, s := range ss {
			n += int64(s.size) * int64(dt.Size())
		}
	}
	return n
}

// slot is one piece of arena memory, allocated on first use at the largest
// size any of its users needs.
type slot struct {
	dt   tensor.Dtype
	size int // elements
	gen  int // bumped whenever mem is replaced
	mem  any // []float32, []float64 or []uint16, len ≥ size once allocated
}

// backing returns the first n elements of the slot's memory, allocating (or
// growing) it to the slot's size first.
func (s *slot) backing(n int) any {
	switch s.dt {
	case tensor.Float32:
		m, _ := s.mem.([]float32)
		if len(m) < s.size {
			m = make([]float32, s.size)
			s.mem, s.gen = m, s.gen+1
		}
		return m[:n]
	case tensor.Uint16: // bfloat16 words (StoreBF16)
		m, _ := s.mem.([]uint16)
		if len(m) < s.size {
			m = make([]uint16, s.size)
			s.mem, s.gen = m, s.gen+1
		}
		return m[:n]
	default:
		m, _ := s.mem.([]float64)
		if len(m) < s.size {
			m = make([]float64, s.size)
			s.mem, s.gen = m, s.gen+1
		}
		return m[:n]
	}
}

// bufferedOp is one of our ops whose output lives in a buffer.
type bufferedOp interface {
	G.Op
	outBuffer() *buffer
}

func (o *attentionOp) outBuffer() *buffer          { return &o.out }
func (o *attentionGradOp) outBuffer() *buffer      { return &o.out }
func (o *dropOp) outBuffer() *buffer               { return &o.out }
func (o *dropGradOp) outBuffer() *buffer           { return &o.out }
func (o *layerNormOp) outBuffer() *buffer          { return &o.out }
func (o *layerNormDxOp) outBuffer() *buffer        { return &o.out }
func (o *layerNormParamGradOp) outBuffer() *buffer { return &o.out }
func (o *linearOp) outBuffer() *buffer             { return &o.out }
func (o *matMulOp) outBuffer() *buffer             { return &o.out }
func (o *colSumOp) outBuffer() *buffer             { return &o.out }
func (o *softmaxCEGradOp) outBuffer() *buffer      { return &o.out }
func (o *permuteOp) outBuffer() *buffer            { return &o.out }
func (o *tokensOp) outBuffer() *buffer             { return &o.out }
func (o *tokensGradOp) outBuffer() *buffer         { return &o.out }
func (o *readoutOp) outBuffer() *buffer            { return &o.out }

// The ops built on elemOp take outBuffer from it.
var (
	_ bufferedOp = (*addOp)(nil)
	_ bufferedOp = (*residualOp)(nil)
	_ bufferedOp = (*geluOp)(nil)
	_ bufferedOp = (*geluGradOp)(nil)
	_ bufferedOp = (*logSoftmaxOp)(nil)
	_ bufferedOp = (*logSoftmaxGradOp)(nil)
)

// PlanStats summarises one PlanBuffers call.
type PlanStats struct {
	Planned  int   // outputs placed in arena slots
	Kept     int   // outputs of ours left in their own buffers (keep, sinks)
	Bytes    int64 // what the planned outputs would take in buffers of their own
	Slots    int   // arena slots after planning (all graphs)
	ArenaMiB float64
}

// PlanBuffers places the outputs of our ops in g into slots of a, so that
// outputs whose lifetimes (from the instruction that writes one to the last
// that reads it, in the tape machine's order) do not overlap share memory.
// Call it after G.Grad and before the graph first runs; the plan holds for
// every later run of g.
//
// The outputs in keep, and every output that nothing in g reads, are left
// in buffers of their own: they are what the caller reads after a run. Ops
// that are not ours (Gorgonia's own, e.g. the adds G.Grad inserts to sum
// gradients) may return or overwrite their inputs, so whatever they read is
// kept alive for as long as their result is.
//
// Graphs planned into one arena must not run concurrently, and the values of
// one (other than keep and sinks) are gone once another has run.
func PlanBuffers(g *G.ExprGraph, a *Arena, keep ...*G.Node) (PlanStats, error) {
	var st PlanStats
	order, pos, err := tapeOrder(g)
	if err != nil {
		return st, fmt.Errorf("plan buffers: %w", err)
	}
	owned, last, err := lifetimes(g, order, pos, keep)
	if err != nil {
		return st, err
	}
	place(a, order, pos, owned, last, &st)
	for _, ss := range a.slots {
		st.Slots += len(ss)
	}
	st.ArenaMiB = float64(a.Bytes()) / (1 << 20)
	return st, nil
}

// forever is the last use of an output that is read after the run (kept,
// or a sink of the graph).
const forever = int(^uint(0) >> 1)

// lifetimes returns the planned outputs (owned: our ops' outputs) and, for
// each, the tape position after which it is never read again (last;
// forever for kept nodes and the graph's sinks, through any op that
// returns a view of its operands).
func lifetimes(g *G.ExprGraph, order []*G.Node, pos map[*G.Node]int, keep []*G.Node) (owned map[*G.Node]bool, last map[*G.Node]int, err error) {
	// alias[n]: the planned outputs n's value may be: n's own for our ops,
	// its children's for anybody else's op, none for inputs.
	owned = map[*G.Node]bool{}
	alias := make(map[*G.Node][]*G.Node, len(order))
	consumers := map[*G.Node]int{}
	operands := make(map[*G.Node][]*G.Node, len(order))
	for _, n := range order {
		ch := children(g, n)
		operands[n] = ch
		for _, c := range ch {
			consumers[c]++
		}
		switch _, ours := n.Op().(bufferedOp); {
		case n.Op() == nil:
		case ours:
			owned[n] = true
			alias[n] = []*G.Node{n}
		default:
			var as []*G.Node
			for _, c := range ch {
				as = append(as, alias[c]...)
			}
			alias[n] = as
		}
	}

	// last[o]: the position after which output o is never read again.
	last = map[*G.Node]int{}
	for o := range owned {
		last[o] = pos[o]
	}
	pin := func(n *G.Node) {
		for _, o := range alias[n] {
			last[o] = forever
		}
	}
	for _, n := range order {
		for _, c := range operands[n] {
			for _, o := range alias[c] {
				if last[o] < pos[n] {
					last[o] = pos[n]
				}
			}
		}
		if consumers[n] == 0 {
			pin(n)
		}
	}
	for _, k := range keep {
		if k == nil {
			continue
		}
		if _, ok := pos[k]; !ok {
			return nil, nil, fmt.Errorf("plan buffers: kept node %v is not in the graph", k.Name())
		}
		pin(k)
	}
	return owned, last, nil
}

// place walks the tape, freeing slots whose users are done and placing
// each planned output into the best-fitting free slot of its dtype (a new
// slot of a when none fits), counting into st.
func place(a *Arena, order []*G.Node, pos map[*G.Node]int, owned map[*G.Node]bool, last map[*G.Node]int, st *PlanStats) {
	type use struct {
		s    *slot
		last int
	}
	var busy []use
	free := map[tensor.Dtype][]*slot{}
	for dt, ss := range a.slots {
		free[dt] = append([]*slot(nil), ss...)
	}
	for _, n := range order {
		p := pos[n]
		kept := busy[:0]
		for _, u := range busy {
			if u.last < p {
				free[u.s.dt] = append(free[u.s.dt], u.s)
			} else {
				kept = append(kept, u)
			}
		}
		busy = kept
		if !owned[n] {
			continue
		}
		b := n.Op().(bufferedOp).outBuffer()
		size := n.Shape().TotalSize()
		dt := n.Dtype()
		if last[n] == forever || n.Dims() == 0 || (dt != tensor.Float32 && dt != tensor.Float64 && dt != tensor.Uint16) {
			b.slot = nil
			st.Kept++
			continue
		}
		s := pick(free[dt], size)
		if s == nil {
			s = &slot{dt: dt}
			a.slots[dt] = append(a.slots[dt], s)
		} else {
			free[dt] = remove(free[dt], s)
		}
		if s.size < size {
			s.size = size
		}
		b.slot, b.t = s, nil
		busy = append(busy, use{s, last[n]})
		st.Planned++
		st.Bytes += int64(size) * int64(dt.Size())
	}
}

// tapeOrder returns g's nodes in the order the tape machine runs them (the
// reverse of G.Sort's, as gorgonia.Compile does) and each node's position.
func tapeOrder(g *G.ExprGraph) ([]*G.Node, map[*G.Node]int, error) {
	order, err := G.Sort(g)
	if err != nil {
		return nil, nil, err
	}
	for i, j := 0, len(order)-1; i < j; i, j = i+1, j-1 {
		order[i], order[j] = order[j], order[i]
	}
	pos := make(map[*G.Node]int, len(order))
	for i, n := range order {
		pos[n] = i
	}
	return order, pos, nil
}

// pick returns the smallest free slot holding at least size elements,
// unless it holds more than maxSlack times size (then nil: a new slot); or
// else the largest one (to be grown), or nil.
func pick(free []*slot, size int) *slot {
	if len(free) == 0 {
		return nil
	}
	sorted := append([]*slot(nil), free...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].size < sorted[j].size })
	for _, s := range sorted {
		if s.size >= size {
			if s.size > maxSlack*size {
				return nil
			}
			return s
		}
	}
	return sorted[len(sorted)-1]
}

// maxSlack bounds the slot an output may take: at most this many times its
// size. A larger free slot waits for a larger output, so a small activation
// kept from the forward pass to the backward one never holds a large slot
// for the whole step. Without it a bf16 ViT-S/16 step recomputing its MLP
// input (Recompute on mlp.fc1), whose (B·T, 4D) slots are free again after
// each block's forward pass, kept each later block's (B·T, D) LayerNorm
// input in one: an arena of 960 MiB instead of 674 MiB (graph
// TestPlanSlack). Graphs without freed large slots grow by 1 % or less.
const maxSlack = 2

func remove(ss []*slot, s *slot) []*slot {
	for i, x := range ss {
		if x == s {
			return append(ss[:i], ss[i+1:]...)
		}
	}
	return ss
}

// children are the operands of n, in order.
func children(g *G.ExprGraph, n *G.Node) []*G.Node {
	it := g.From(n.ID())
	var out []*G.Node
	for it.Next() {
		out = append(out, it.Node().(*G.Node))
	}
	return out
}
