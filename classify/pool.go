package classify

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/vitgo/vit/evaluate"
	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/layers"
)

// item is one preprocessed image waiting for a lane.
type item struct {
	x   []float32 // (C, H, W) normalized
	i   int       // position in its request
	req *request
}

// request collects the answers to one Classify part.
type request struct {
	ctx  context.Context
	out  [][]Prediction
	left atomic.Int32
	done chan struct{}

	mu  sync.Mutex
	err error
}

// finish records item i's answer (or error); the last one closes done.
func (r *request) finish(i int, p []Prediction, err error) {
	if err != nil {
		r.mu.Lock()
		if r.err == nil {
			r.err = err
		}
		r.mu.Unlock()
	} else {
		r.out[i] = p
	}
	if r.left.Add(-1) == 0 {
		close(r.done)
	}
}

func (r *request) fail(err error) { r.finish(-1, nil, err) }

func (r *request) firstErr() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// lane owns the evaluation graphs of batch 1, 2, 4, …, maxBatch, planned
// into one arena: a lane runs one graph at a time.
type lane struct {
	evals []*evaluate.Evaluator // ascending batch sizes
	in    []float32             // (maxBatch, C, H, W) staging buffer
	batch []*item
}

func newLane(m *layers.VisionTransformer, maxBatch int, arena *graph.Arena, prec graph.Precision) (*lane, error) {
	l := &lane{}
	for b := 1; ; b *= 2 {
		b = min(b, maxBatch)
		ev, err := evaluate.NewFrozenIn(m, b, arena, evaluate.WithPrecision(prec))
		if err != nil {
			l.close()
			return nil, err
		}
		l.evals = append(l.evals, ev)
		if b == maxBatch {
			break
		}
	}
	c := m.Config
	l.in = make([]float32, maxBatch*c.InChans*c.ImgSize[0]*c.ImgSize[1])
	return l, nil
}

func (l *lane) close() {
	for _, ev := range l.evals {
		ev.Close()
	}
	l.evals = nil
}

// serve runs batches on lane l until Close: it waits for one image, takes
// every further image already queued up to MaxBatch, and runs them on the
// lane's graphs (runBatch).
func (c *Classifier) serve(l *lane) {
	for {
		var first *item
		select {
		case first = <-c.queue:
		case <-c.quit:
			return
		}
		l.batch = append(l.batch[:0], first)
	gather:
		for len(l.batch) < c.opts.MaxBatch {
			select {
			case it := <-c.queue:
				l.batch = append(l.batch, it)
			default:
				break gather
			}
		}
		c.runBatch(l)
	}
}

// runBatch evaluates l.batch and hands each request its answers. The
// images are run in parts that fill a graph exactly, largest first (7
// images on graphs of 1, 2, 4 and 8 run as 4 + 2 + 1): padding a batch up to
// the next graph would compute the padded images for nothing.
func (c *Classifier) runBatch(l *lane) {
	live := l.batch[:0]
	for _, it := range l.batch {
		if err := it.req.ctx.Err(); err != nil {
			it.req.finish(it.i, nil, err)
			continue
		}
		live = append(live, it)
	}
	for len(live) > 0 {
		ev := l.evals[0]
		for _, e := range l.evals {
			if e.Graph().Batch <= len(live) {
				ev = e
			}
		}
		n := ev.Graph().Batch
		c.runPart(l, ev, live[:n])
		live = live[n:]
	}
}

// runPart runs the n = len(part) images of part on ev, a graph of batch n.
func (c *Classifier) runPart(l *lane, ev *evaluate.Evaluator, part []*item) {
	n := len(part)
	size := len(part[0].x)
	for j, it := range part {
		copy(l.in[j*size:(j+1)*size], it.x)
	}
	c.batches.Add(1)
	c.images.Add(int64(n))
	for m := c.maxSeen.Load(); int64(n) > m && !c.maxSeen.CompareAndSwap(m, int64(n)); m = c.maxSeen.Load() {
	}
	logits, err := ev.Logits(l.in[:n*size], n)
	k := len(c.classes)
	for j, it := range part {
		if err != nil {
			it.req.finish(it.i, nil, err)
			continue
		}
		p, ok := c.topK(logits[j*k : (j+1)*k])
		if !ok {
			it.req.finish(it.i, nil, &NonFiniteError{Index: it.i})
			continue
		}
		it.req.finish(it.i, p, nil)
	}
}
