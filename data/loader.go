package data

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// LoaderConfig is what the training loop tells the loader.
type LoaderConfig struct {
	BatchSize  int           // images per batch
	ImgH, ImgW int           // model input size; images are resized to it
	Train      bool          // shuffle, augment, mix and drop the last partial batch
	Seed       uint64        // root of every random stream
	Workers    int           // decoding/augmenting goroutines (0 = runtime.NumCPU())
	Prefetch   int           // batches in flight ahead of the consumer (0 = 4)
	Augment    AugmentConfig // train-time augmentation (ignored in evaluation)
	Mixup      MixupConfig   // train-time mixing and label smoothing (ignored in evaluation)
	NumClasses int           // width of Batch.Targets; must cover the data set's classes
	Mean, Std  []float64     // normalization (empty = the data set's Norm())

	// Rank and Ranks shard the data for data-parallel training (Ranks 0 or
	// 1: one process). In training, BatchSize stays the global batch and
	// rank r builds its BatchSize/Ranks rows of each global batch, bit for
	// bit as one process would (Slice gives their positions); Mixup/CutMix
	// partners are in the same slice. In evaluation, rank r builds the whole
	// batches whose step is r modulo Ranks.
	Rank, Ranks int
}

// Slice returns the positions, within a global training batch of batch
// rows, of the rows rank of ranks builds: the pairs p, batch−1−p (the
// partners of Mixup and CutMix) for p in [rank·q, (rank+1)·q), q =
// batch/(2·ranks), as two ascending runs. Row i's partner is row len−1−i.
// One rank gets 0…batch−1 whatever the batch.
func Slice(batch, rank, ranks int) ([]int, error) {
	if ranks <= 1 {
		rows := make([]int, batch)
		for i := range rows {
			rows[i] = i
		}
		return rows, nil
	}
	if rank < 0 || rank >= ranks {
		return nil, fmt.Errorf("data: loader: rank %d outside [0,%d)", rank, ranks)
	}
	if batch%(2*ranks) != 0 {
		return nil, &ShardError{Batch: batch, Ranks: ranks}
	}
	q := batch / (2 * ranks)
	lo, hi := rank*q, (rank+1)*q
	rows := make([]int, 0, 2*q)
	for p := lo; p < hi; p++ {
		rows = append(rows, p)
	}
	for p := batch - hi; p < batch-lo; p++ {
		rows = append(rows, p)
	}
	return rows, nil
}

// ShardError is returned for a global training batch that the ranks cannot
// share evenly in mirrored pairs.
type ShardError struct{ Batch, Ranks int }

func (e *ShardError) Error() string {
	return fmt.Sprintf("train.batch_size: %d is not a multiple of 2 × %d ranks; each rank takes whole pairs of rows (Mixup/CutMix partners)", e.Batch, e.Ranks)
}

// Batch is one batch of images and targets. The consumer owns it until it
// calls Release (optional), after which the loader may reuse its buffers.
type Batch struct {
	X       []float32 // (N, C, H, W) normalized images
	Labels  []int     // (N) original labels
	Targets []float32 // (N, NumClasses) soft targets, each row sums to 1
	N       int       // images in this batch (BatchSize, or fewer for evaluation's last batch)
	Step    int       // step within the epoch
	Indices []int     // (N) data set index of each image
	Rows    []int     // (N) position of each image in the global batch (see LoaderConfig.Rank)
	C, H, W int       // image shape

	pool chan *Batch
}

// Release hands the batch's buffers back to the loader for reuse. The batch
// must not be used afterwards. Calling it is optional.
func (b *Batch) Release() {
	if b == nil || b.pool == nil {
		return
	}
	select {
	case b.pool <- b:
	default:
	}
}

// Loader produces batches of a data set, epoch by epoch. It is deterministic:
// the batch at (Seed, epoch, step) depends on nothing else, whatever the
// worker count or timing, so Epoch(e, k) yields exactly the tail of
// Epoch(e, 0) from step k.
type Loader struct {
	ds    Dataset
	cfg   LoaderConfig
	pipe  *Pipeline
	mix   *Mixup
	steps int
	rows  []int // training: the positions this rank builds in each global batch
	pool  chan *Batch
}

// NewLoader checks cfg against ds and returns a loader.
func NewLoader(ds Dataset, cfg LoaderConfig) (*Loader, error) {
	if ds == nil {
		return nil, errors.New("data: loader: nil data set")
	}
	if cfg.BatchSize <= 0 {
		return nil, fmt.Errorf("data: loader: batch size must be positive, got %d", cfg.BatchSize)
	}
	if cfg.ImgH <= 0 || cfg.ImgW <= 0 {
		return nil, fmt.Errorf("data: loader: image size must be positive, got %dx%d", cfg.ImgH, cfg.ImgW)
	}
	if cfg.Workers < 0 || cfg.Workers > MaxWorkers {
		return nil, fmt.Errorf("data.workers: must be in [0, %d], got %d", MaxWorkers, cfg.Workers)
	}
	if cfg.Prefetch < 0 || cfg.Prefetch > MaxPrefetch {
		return nil, fmt.Errorf("data.prefetch: must be in [1, %d], got %d", MaxPrefetch, cfg.Prefetch)
	}
	if cfg.Workers == 0 {
		cfg.Workers = runtime.NumCPU()
	}
	if cfg.Prefetch == 0 {
		cfg.Prefetch = 4
	}
	if nc := len(ds.Classes()); cfg.NumClasses < nc {
		return nil, fmt.Errorf("data: loader: %s has %d classes but num_classes is %d", ds.Name(), nc, cfg.NumClasses)
	}
	cfg.Augment = cfg.Augment.WithDefaults()
	if err := cfg.Augment.Validate(); err != nil {
		return nil, err
	}
	if err := cfg.Mixup.Validate(); err != nil {
		return nil, err
	}
	mean, std := cfg.Mean, cfg.Std
	if len(mean) == 0 && len(std) == 0 {
		mean, std = ds.Norm()
	}
	pipe, err := NewPipeline(ds.Channels(), cfg.ImgH, cfg.ImgW, cfg.Train, cfg.Seed, cfg.Augment, mean, std)
	if err != nil {
		return nil, err
	}
	mixCfg := cfg.Mixup
	if !cfg.Train {
		mixCfg = DefaultMixupConfig() // evaluation: plain one-hot targets
	}
	mix, err := NewMixup(mixCfg, cfg.NumClasses)
	if err != nil {
		return nil, err
	}
	if mixCfg.Active() {
		if cfg.BatchSize%2 != 0 {
			return nil, fmt.Errorf("data: loader: mixup/cutmix need an even batch size (timm's rule), got %d", cfg.BatchSize)
		}
		if err := mix.checkSize(cfg.ImgH, cfg.ImgW); err != nil {
			return nil, err
		}
	}
	if cfg.Ranks < 0 || cfg.Ranks > 1 && (cfg.Rank < 0 || cfg.Rank >= cfg.Ranks) {
		return nil, fmt.Errorf("data: loader: rank %d of %d ranks", cfg.Rank, cfg.Ranks)
	}
	var rows []int
	if cfg.Train {
		if rows, err = Slice(cfg.BatchSize, cfg.Rank, cfg.Ranks); err != nil {
			return nil, err
		}
	}
	n := ds.Len()
	steps := (n + cfg.BatchSize - 1) / cfg.BatchSize
	if cfg.Train {
		steps = n / cfg.BatchSize
		if steps == 0 {
			return nil, fmt.Errorf("data: loader: %s has %d training images, fewer than one batch of %d", ds.Name(), n, cfg.BatchSize)
		}
	} else if n == 0 {
		return nil, fmt.Errorf("data: loader: %s has no images", ds.Name())
	}
	return &Loader{ds: ds, cfg: cfg, pipe: pipe, mix: mix, steps: steps, rows: rows,
		pool: make(chan *Batch, cfg.Prefetch+2)}, nil
}

// StepsPerEpoch returns the number of global batches in an epoch: ⌊N/B⌋
// in training (the last partial batch is dropped), ⌈N/B⌉ in evaluation (of
// which one rank of several yields every Ranks-th).
func (l *Loader) StepsPerEpoch() int { return l.steps }

// Config returns the loader's configuration with defaults filled in.
func (l *Loader) Config() LoaderConfig { return l.cfg }

// Dataset returns the data set the loader reads.
func (l *Loader) Dataset() Dataset { return l.ds }

// order returns the data set indices of epoch in visiting order: a
// permutation drawn from (Seed, epoch) in training, 0..N−1 in evaluation.
func (l *Loader) order(epoch int) []int {
	n := l.ds.Len()
	if l.cfg.Train {
		return newRNG(l.cfg.Seed, uint64(epoch), streamShuffle).permutation(n)
	}
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return p
}

func (l *Loader) batchSize(step int) int {
	return min(l.cfg.BatchSize, l.ds.Len()-step*l.cfg.BatchSize)
}

func (l *Loader) getBatch(step, n int) *Batch {
	c, h, w, k := l.ds.Channels(), l.cfg.ImgH, l.cfg.ImgW, l.cfg.NumClasses
	var b *Batch
	select {
	case b = <-l.pool:
	default:
		bs := l.cfg.BatchSize
		if l.rows != nil {
			bs = len(l.rows)
		}
		b = &Batch{X: make([]float32, bs*c*h*w), Labels: make([]int, bs), Targets: make([]float32, bs*k),
			Indices: make([]int, bs), Rows: make([]int, bs), pool: l.pool}
	}
	b.N, b.Step, b.C, b.H, b.W = n, step, c, h, w
	b.X = b.X[:n*c*h*w]
	b.Labels = b.Labels[:n]
	b.Targets = b.Targets[:n*k]
	b.Indices = b.Indices[:n]
	b.Rows = b.Rows[:n]
	return b
}

// batchJob is a batch being filled by the workers.
type batchJob struct {
	b       *Batch
	epoch   int
	left    atomic.Int32
	done    chan struct{}
	failed  atomic.Bool
	errOnce sync.Once
	err     error // written once before failed is set; read after done is closed
}

func (j *batchJob) fail(err error) {
	j.errOnce.Do(func() { j.err = err })
	j.failed.Store(true)
}

type sampleTask struct {
	job *batchJob
	i   int
}

// Iter yields the batches of one epoch. Call Close when done with it (also
// after an error or an early stop) to stop its goroutines.
type Iter struct {
	l       *Loader
	epoch   int
	pending chan *batchJob
	quit    chan struct{}
	wg      sync.WaitGroup
	closeMu sync.Once
	err     error
	ended   bool
}

// Epoch starts producing the batches of epoch from step startStep on
// (0 = the whole epoch). Workers decode and augment samples in parallel; at
// most Prefetch batches are in flight.
func (l *Loader) Epoch(epoch, startStep int) *Iter {
	it := &Iter{l: l, epoch: epoch, quit: make(chan struct{})}
	if epoch < 0 {
		it.err = fmt.Errorf("data: loader: epoch must be >= 0, got %d", epoch)
		return it
	}
	if startStep < 0 || startStep > l.steps {
		it.err = fmt.Errorf("data: loader: start step %d outside [0,%d]", startStep, l.steps)
		return it
	}
	it.pending = make(chan *batchJob, l.cfg.Prefetch)
	tasks := make(chan sampleTask, l.cfg.BatchSize)
	order := l.order(epoch)

	it.wg.Add(1)
	go func() { // dispatcher: one job per step, in order
		defer it.wg.Done()
		defer close(tasks)
		defer close(it.pending)
		for step := startStep; step < l.steps; step++ {
			n := l.batchSize(step)
			if l.rows != nil {
				n = len(l.rows)
			} else if l.cfg.Ranks > 1 && step%l.cfg.Ranks != l.cfg.Rank {
				continue // evaluation: another rank's batch
			}
			job := &batchJob{b: l.getBatch(step, n), epoch: epoch, done: make(chan struct{})}
			job.left.Store(int32(n))
			base := order[step*l.cfg.BatchSize:]
			for i := range n {
				p := i
				if l.rows != nil {
					p = l.rows[i]
				}
				job.b.Rows[i], job.b.Indices[i] = p, base[p]
			}
			select {
			case it.pending <- job:
			case <-it.quit:
				return
			}
			for i := 0; i < n; i++ {
				select {
				case tasks <- sampleTask{job, i}:
				case <-it.quit:
					return
				}
			}
		}
	}()
	for w := 0; w < l.cfg.Workers; w++ {
		it.wg.Add(1)
		go func() {
			defer it.wg.Done()
			var s scratch
			for {
				select {
				case t, ok := <-tasks:
					if !ok {
						return
					}
					l.runTask(t, &s)
				case <-it.quit:
					return
				}
			}
		}()
	}
	return it
}

// pixReleaser is a data set whose Item decodes into pooled buffers (a
// Folder): the loader gives each image back once transformed.
type pixReleaser interface{ releasePix(Image) }

// runTask transforms one sample into its batch slot; the worker finishing a
// batch's last sample mixes the batch and closes its done channel.
func (l *Loader) runTask(t sampleTask, s *scratch) {
	b, job := t.job.b, t.job
	if !job.failed.Load() {
		idx := b.Indices[t.i]
		pos := b.Step*l.cfg.BatchSize + b.Rows[t.i]
		var img Image
		var label int
		var err error
		if hd, ok := l.ds.(HeldDataset); ok {
			var release func()
			img, label, release, err = hd.ItemHeld(idx)
			defer release() // after the transform has read img
		} else {
			img, label, err = l.ds.Item(idx)
		}
		switch {
		case err != nil:
			job.fail(fmt.Errorf("epoch %d step %d: item %d: %w", job.epoch, b.Step, idx, err))
		case label < 0 || label >= l.cfg.NumClasses:
			job.fail(fmt.Errorf("data: %s: item %d has label %d, not below num_classes %d", l.ds.Name(), idx, label, l.cfg.NumClasses))
		default:
			size := b.C * b.H * b.W
			b.Labels[t.i] = label
			if err := l.pipe.apply(b.X[t.i*size:(t.i+1)*size], img, job.epoch, pos, s); err != nil {
				job.fail(fmt.Errorf("epoch %d step %d: item %d: %w", job.epoch, b.Step, idx, err))
			}
			if r, ok := l.ds.(pixReleaser); ok {
				r.releasePix(img) // the transform has read it
			}
		}
	}
	if job.left.Add(-1) == 0 {
		if !job.failed.Load() {
			key := hashKey(l.cfg.Seed, uint64(job.epoch), uint64(b.Step), streamMixup)
			if _, err := l.mix.ApplyRows(b.X, b.Labels, b.C, b.H, b.W, b.Targets, key, b.Rows, l.batchSize(b.Step)); err != nil {
				job.fail(err)
			}
		}
		close(job.done)
	}
}

// Next returns the next batch, false at the end of the epoch, or an error
// (after which the iterator is finished).
func (it *Iter) Next() (*Batch, bool, error) {
	if it.err != nil || it.ended {
		return nil, false, it.err
	}
	var job *batchJob
	var ok bool
	select {
	case job, ok = <-it.pending:
	case <-it.quit:
	}
	if !ok {
		it.ended = true
		return nil, false, nil
	}
	select {
	case <-job.done:
	case <-it.quit:
		it.ended = true
		return nil, false, nil
	}
	if job.err != nil {
		it.err = job.err
		it.Close()
		return nil, false, it.err
	}
	return job.b, true, nil
}

// Close stops the iterator's goroutines and waits for them. Batches already
// returned stay valid. Safe to call more than once.
func (it *Iter) Close() {
	it.closeMu.Do(func() {
		close(it.quit)
		it.wg.Wait()
	})
	it.ended = true
}
