// Package parallel runs numbered chunks of work on every core. It is the one
// worker loop behind the kernels', the graph ops' and the optimizer's
// parallel passes; each of those keeps its own rule for cutting the work
// into chunks.
//
// A training step calls Run a few hundred to a few thousand times, one op
// after another. Starting a goroutine for each call costs little, but on a
// virtual machine the idle core it lands on can take tens of microseconds
// to wake, and that is idle time of every core but the caller's at the start of every
// call. So Run hands its chunks to a pool of helper goroutines, one per
// extra core, that spin for a short while (spinFor) after each call,
// yielding to any other goroutine, before they sleep: calls that follow each
// other closely find the helpers awake.
//
// The hooks that experiments/bench's scaling sweeps read (Record, Waited,
// Polled) exist only in a build with the tag parallelrecord (pass.go); the
// default build compiles them out of Run.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// spinFor is how long a helper, and a caller waiting for the helpers'
// last chunks, polls before it sleeps. It covers the gaps between one op's
// parallel pass and the next (the tape machine, small serial ops), not the
// time between training steps.
const spinFor = 500 * time.Microsecond

// Run calls body(c) once for every chunk c in [0, chunks), on up to
// GOMAXPROCS goroutines, the calling one included. Chunks are handed out
// dynamically, so a core slowed by other work takes fewer. With one core or
// one chunk it runs the chunks in order on the calling goroutine. Run
// returns when every call has returned. Run may be called from several
// goroutines at once and from inside a body; such calls start goroutines of
// their own instead of using the pool.
func Run(chunks int, body func(c int)) {
	if Recording && recordRun(chunks, body) {
		return
	}
	workers := min(runtime.GOMAXPROCS(0), chunks)
	if workers <= 1 {
		for c := 0; c < chunks; c++ {
			body(c)
		}
		return
	}
	j := &job{body: body, chunks: int64(chunks), helpers: workers - 1, fin: make(chan struct{})}
	if !pool.mu.TryLock() {
		j.spawn()
		return
	}
	defer pool.mu.Unlock() // also if a body panics on this goroutine and the panic is recovered above
	pool.publish(j)
	j.work()
	if j.done.Load() != j.chunks {
		var start time.Time
		if Recording {
			start = time.Now()
		}
		j.wait()
		if Recording {
			addWaited(time.Since(start))
		}
	}
}

// job is one call of Run.
type job struct {
	body    func(c int)
	chunks  int64
	helpers int           // helpers that may take part: pool workers [0, helpers)
	next    atomic.Int64  // the next chunk to hand out
	done    atomic.Int64  // chunks finished
	fin     chan struct{} // closed when the last chunk has finished
}

// work runs chunks until none is left to hand out.
func (j *job) work() {
	for {
		c := j.next.Add(1) - 1
		if c >= j.chunks {
			return
		}
		j.body(int(c))
		if j.done.Add(1) == j.chunks {
			close(j.fin)
		}
	}
}

// wait returns once every chunk has finished, polling for spinFor first.
func (j *job) wait() {
	if spinUntil(func() bool { return j.done.Load() == j.chunks }) {
		return
	}
	<-j.fin
}

// spawn runs the job on helpers goroutines of its own and the caller.
func (j *job) spawn() {
	var wg sync.WaitGroup
	wg.Add(j.helpers)
	for range j.helpers {
		go func() {
			defer wg.Done()
			j.work()
		}()
	}
	j.work()
	wg.Wait()
}

// spinUntil polls cond, yielding the processor between polls, until it
// holds (true) or spinFor has passed (false).
func spinUntil(cond func() bool) bool {
	if cond() {
		return true
	}
	start := time.Now()
	if Recording {
		defer func() { addPolled(time.Since(start)) }()
	}
	for i := 0; ; i++ {
		runtime.Gosched()
		if cond() {
			return true
		}
		if i%64 == 63 && time.Since(start) > spinFor {
			return cond()
		}
	}
}

// pool is the helpers Run hands its chunks to: one job at a time (mu).
var pool workerPool

type workerPool struct {
	mu      sync.Mutex
	cur     atomic.Pointer[job] // the latest job
	workers []*worker           // grows to the largest helper count asked for; guarded by mu
}

// worker is one helper goroutine.
type worker struct {
	id       int
	sleeping atomic.Bool
	wake     chan struct{} // a token: a job may be waiting
}

// publish makes j the current job and wakes the helpers it may use,
// starting those that do not exist yet. The caller holds p.mu.
func (p *workerPool) publish(j *job) {
	for len(p.workers) < j.helpers {
		w := &worker{id: len(p.workers), wake: make(chan struct{}, 1)}
		p.workers = append(p.workers, w)
		go w.loop(p, p.cur.Load())
	}
	p.cur.Store(j)
	for _, w := range p.workers[:j.helpers] {
		if w.sleeping.Load() {
			select {
			case w.wake <- struct{}{}:
			default:
			}
		}
	}
}

// loop runs every job after seen that the worker may take part in. Between
// jobs it polls for spinFor, then sleeps until publish wakes it.
func (w *worker) loop(p *workerPool, seen *job) {
	for {
		var j *job
		fresh := func() bool {
			j = p.cur.Load()
			return j != seen
		}
		if !spinUntil(fresh) {
			w.sleeping.Store(true)
			// publish stores the job before it reads sleeping, and we set
			// sleeping before this second look: one of the two sees the other.
			for !fresh() {
				<-w.wake
			}
			w.sleeping.Store(false)
		}
		seen = j
		if w.id < j.helpers {
			j.work()
		}
	}
}

// For calls body(lo, hi) over [0, n) in chunks of about size units, each
// starting at a multiple of align, through Run. It evens the chunks out over
// the cores: their count is rounded up to a multiple of GOMAXPROCS (three
// chunks on two cores become four smaller ones), so that no core waits
// while another runs a last, lone chunk. When there are at least tailCut
// chunks per core, it also cuts the last GOMAXPROCS chunks into pieces
// that halve in size (tailLevels), so that the cores, which take chunks as
// they free up, finish within about a sixteenth of a chunk of each other
// instead of half a chunk on average. With fewer chunks it leaves them
// whole: their size is then the caller's floor (a product's fewest rows per
// chunk), which a cut would undercut. With one core or one chunk it calls
// body(0, n) inline.
func For(n, size, align int, body func(lo, hi int)) {
	if n <= 0 {
		return
	}
	p := plan(n, size, align, runtime.GOMAXPROCS(0))
	if p.chunks() <= 1 {
		body(0, n)
		return
	}
	Run(p.chunks(), func(c int) {
		lo, hi := p.bounds(c)
		body(lo, hi)
	})
}

// ForGrain calls body(lo, hi) over [0, n), n units of similar cost (rows,
// images, (image, head) pairs), in about four chunks per core of at least
// grain units each, through For: the split of the graph ops' parallel
// passes. Up to grain units it runs inline.
func ForGrain(n, grain int, body func(lo, hi int)) {
	w := runtime.GOMAXPROCS(0)
	For(n, max(grain, (n+4*w-1)/(4*w), 1), 1, body)
}

// ForThen is For followed, in the same pass, by then(c) for every c in
// [0, extra): chunks the cores take as they run out of body's, so that
// small independent work (packing the next block of a product) fills the
// end of the pass instead of making a pass of its own. With n ≤ 0 it runs
// only the extra chunks (body may then be nil). It returns when every call
// has returned.
func ForThen(n, size, align int, body func(lo, hi int), extra int, then func(c int)) {
	if n <= 0 {
		For(extra, 1, 1, func(lo, hi int) {
			for c := lo; c < hi; c++ {
				then(c)
			}
		})
		return
	}
	p := plan(n, size, align, runtime.GOMAXPROCS(0))
	chunks := p.chunks()
	Run(chunks+extra, func(c int) {
		if c >= chunks {
			then(c - chunks)
			return
		}
		lo, hi := p.bounds(c)
		body(lo, hi)
	})
}

// tailCut is the fewest chunks per core for which For cuts the last ones:
// the callers ask for about four per core unless their floor gives fewer.
const tailCut = 4

// tailLevels is how many times For halves the pieces of its tail: the last
// GOMAXPROCS chunks become GOMAXPROCS pieces of half a chunk, as many of a
// quarter, and the rest pieces of an eighth. The cores then finish about
// half a last piece apart, a sixteenth of a chunk, in as many pieces as
// cutting the tail in quarters made (ViT-S/16's row-split products on two
// cores: tail pieces of 25–100 rows instead of 198).
const tailLevels = 3

// chunking is For's split of [0, n): head chunks of size units, then the
// rest, from tail = head·size, in pieces that halve tailLevels times: at
// level L (1, 2, …), workers pieces of piece(L) units, the last level's as
// many as it takes.
type chunking struct {
	n, size, head, tail, align, workers int
}

// plan returns For's split of n units in chunks of about size, aligned to
// align, on workers cores.
func plan(n, size, align, workers int) chunking {
	size, chunks := balance(n, size, align, workers)
	if chunks < tailCut*workers {
		return chunking{n: n, size: size, head: chunks, tail: n, align: 1, workers: workers}
	}
	head := chunks - workers
	return chunking{n: n, size: size, head: head, tail: head * size, align: max(align, 1), workers: workers}
}

// piece is the size of the tail's pieces at level L: size/2^L, rounded up
// to align.
func (p chunking) piece(L int) int {
	return roundUp(max((p.size+1<<L-1)>>L, 1), p.align)
}

// chunks returns the number of chunks: head ones, then the tail's pieces.
func (p chunking) chunks() int {
	c, lo := p.head, p.tail
	for L := 1; lo < p.n; L++ {
		piece := p.piece(L)
		if L == tailLevels || lo+p.workers*piece >= p.n {
			return c + (p.n-lo+piece-1)/piece
		}
		lo += p.workers * piece
		c += p.workers
	}
	return c
}

// bounds returns chunk c's units [lo, hi).
func (p chunking) bounds(c int) (lo, hi int) {
	if c < p.head {
		lo = c * p.size
		return lo, min(lo+p.size, p.n)
	}
	lo, c = p.tail, c-p.head
	for L := 1; ; L++ {
		piece := p.piece(L)
		if L == tailLevels || c < p.workers {
			lo += c * piece
			return lo, min(lo+piece, p.n)
		}
		lo += p.workers * piece
		c -= p.workers
	}
}

// balance returns the chunk size and count of n units in chunks of about
// size, aligned to align, their count rounded up to a multiple of workers:
// For's split before it cuts the last chunks.
func balance(n, size, align, workers int) (int, int) {
	align = max(align, 1)
	size = roundUp(max(size, align), align)
	chunks := (n + size - 1) / size
	if workers <= 1 || chunks <= 1 {
		return n, 1
	}
	if even := roundUp(chunks, workers); even != chunks {
		size = roundUp((n+even-1)/even, align)
		chunks = (n + size - 1) / size
	}
	return size, chunks
}

// roundUp rounds x up to a multiple of m.
func roundUp(x, m int) int { return (x + m - 1) / m * m }
