package classify

import (
	"context"
	"errors"
	"fmt"
	"image"
	"math"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/checkpoint"
	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/layers"
)

// DefaultMaxPixels is the largest image (width·height) Classify and
// ClassifyFiles accept when Options.MaxPixels is 0: the data package's
// data.max_pixels default, 50 megapixels.
const DefaultMaxPixels = data.DefaultMaxPixels

// Options adjust Load. The zero value means the defaults documented on each
// field.
type Options struct {
	// ImgSize classifies at another input size, the position table
	// resampled with PosInterp; nil = the checkpoint's img_size.
	ImgSize *layers.Size2
	// PosInterp resamples pos_embed when ImgSize changes the patch grid:
	// "bicubic" (default) or "bilinear".
	PosInterp string
	// Resize is the resize to the model's input size when CropPct is 0:
	// data.InterpBilinear (default, what the trainer's evaluation uses) or
	// data.InterpBilinearAA.
	Resize data.Interpolation
	// CropPct, if not 0, selects timm's evaluation transform instead: resize
	// (PIL bilinear) so the short side is img_size/CropPct, then crop the
	// centre. Must lie in (0, 1].
	CropPct float64
	// TopK is the number of predictions per image; 0 = 5, capped at the
	// number of classes.
	TopK int
	// PoolSize is the number of lanes that run batches concurrently; 0 = 1.
	PoolSize int
	// MaxBatch is the largest batch a lane runs; 0 = 8 (batching concurrent
	// callers raises the images per second over batch 1; the README has the
	// measurements). Longer requests are split.
	MaxBatch int
	// MaxPixels refuses larger images (checked from a file's header before
	// decoding, with the data package's check); 0 = DefaultMaxPixels.
	MaxPixels int64
	// Workers decode and transform files for ClassifyFiles; 0 = GOMAXPROCS.
	Workers int
	// Budget bounds the memory of ClassifyFiles' decodes in flight (each
	// takes data.Header.Cost until its image is transformed, first come
	// first served; a file costing more than the whole budget is refused
	// with *OverBudgetError in its Result); nil = data.SharedBudget().
	Budget *data.Budget
	// Precision is the arithmetic of the graphs' matrix products:
	// graph.FP32 (default, also ""), graph.BF16, bfloat16 operands with
	// float32 accumulation, or graph.INT8, the Linear weights but the
	// head's quantized to int8 once at load and the activations per row
	// (see graph.Precision). The checkpoint's float32 weights are read as
	// they are; int8 then keeps each quantized weight only as int8
	// integers with per-channel scales, and the head only as the packed
	// float32 copy its graphs read (layers' ReleaseFloatWeights).
	Precision graph.Precision
}

// Prediction is one of an image's top-k classes.
type Prediction struct {
	Class int     `json:"class"` // index into Classes()
	Label string  `json:"label"` // class name
	Prob  float64 `json:"prob"`  // softmax probability
}

// ErrClosed is returned by Classify after Close.
var ErrClosed = errors.New("classify: classifier closed")

// ImageError says which image of a request could not be classified.
type ImageError struct {
	Index int // position in the request
	Err   error
}

func (e *ImageError) Error() string { return fmt.Sprintf("image %d: %v", e.Index, e.Err) }
func (e *ImageError) Unwrap() error { return e.Err }

// TooLargeError refuses an image with more pixels than the limit: the data
// package's error, so errors.As finds one type whichever path refused it.
type TooLargeError = data.ImageTooLargeError

// NonFiniteError reports logits that are NaN or infinite: the model's
// weights or the image produced no usable answer.
type NonFiniteError struct{ Index int }

func (e *NonFiniteError) Error() string {
	return fmt.Sprintf("image %d: the model produced non-finite logits", e.Index)
}

// Classifier classifies images with one checkpoint. It is safe for
// concurrent use.
type Classifier struct {
	opts    Options
	meta    checkpoint.ModelMeta
	model   *layers.VisionTransformer
	classes []string
	notes   []string
	pipe    *data.Pipeline
	mean    []float64
	std     []float64
	c, h, w int
	topk    int

	queue chan *item
	quit  chan struct{}
	lanes []*lane
	wg    sync.WaitGroup

	batches, images, maxSeen atomic.Int64 // batches run, images in them, largest batch

	mu     sync.RWMutex // held for reading while submitting; Close takes it for writing
	closed bool
}

// Load reads a model file of ours and builds opts.PoolSize lanes of
// evaluation graphs for it.
func Load(path string, opts Options) (*Classifier, error) {
	if opts.PoolSize < 0 || opts.MaxBatch < 0 || opts.TopK < 0 || opts.MaxPixels < 0 || opts.Workers < 0 {
		return nil, fmt.Errorf("classify: options must not be negative: %+v", opts)
	}
	if opts.PoolSize == 0 {
		opts.PoolSize = 1
	}
	if opts.MaxBatch == 0 {
		opts.MaxBatch = 8
	}
	if opts.TopK == 0 {
		opts.TopK = 5
	}
	if opts.MaxPixels == 0 {
		opts.MaxPixels = DefaultMaxPixels
	}
	if opts.Resize == "" {
		opts.Resize = data.InterpBilinear
	}
	if opts.CropPct != 0 && !(opts.CropPct > 0 && opts.CropPct <= 1) {
		return nil, fmt.Errorf("classify: crop_pct must be in (0, 1], got %v", opts.CropPct)
	}
	if err := opts.Precision.Validate(); err != nil {
		return nil, fmt.Errorf("classify: precision %w", err)
	}
	aug := data.DefaultAugmentConfig()
	aug.Interpolation = opts.Resize
	if err := aug.Validate(); err != nil {
		return nil, fmt.Errorf("classify: %w", err)
	}
	m, meta, notes, err := checkpoint.LoadModel(path, tensor.Float32, opts.ImgSize, opts.PosInterp)
	if err != nil {
		return nil, err
	}
	cfg := m.Config
	if err := checkLanes(cfg, opts.PoolSize, opts.MaxBatch); err != nil {
		return nil, err
	}
	if opts.Precision.IsInt8() { // every lane's graphs read the one quantized copy
		if err := m.ReleaseFloatWeights(graph.INT8); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	mean, std := meta.Mean, meta.Std
	if len(mean) == 0 {
		mean, std = data.DefaultNorm(data.DatasetName(meta.Dataset), cfg.InChans)
		notes = append(notes, fmt.Sprintf("%s records no mean/std: using %s's defaults", path, meta.Dataset))
	}
	pipe, err := data.NewPipeline(cfg.InChans, cfg.ImgSize[0], cfg.ImgSize[1], false, 0, aug, mean, std)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	classes := make([]string, cfg.NumClasses)
	for i := range classes {
		if i < len(meta.Classes) && meta.Classes[i] != "" { // the metadata has one name per output (checkpoint.ParseModelMeta)
			classes[i] = meta.Classes[i]
		} else { // an output no class was trained on
			classes[i] = strconv.Itoa(i)
		}
	}
	c := &Classifier{
		opts: opts, meta: meta, model: m, classes: classes, notes: notes, pipe: pipe, mean: mean, std: std,
		c: cfg.InChans, h: cfg.ImgSize[0], w: cfg.ImgSize[1], topk: min(opts.TopK, cfg.NumClasses),
		queue: make(chan *item, opts.PoolSize*opts.MaxBatch), quit: make(chan struct{}),
	}
	for i := 0; i < opts.PoolSize; i++ {
		l, err := newLane(m, opts.MaxBatch, graph.NewArena(), opts.Precision)
		if err != nil {
			c.closeLanes()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		c.lanes = append(c.lanes, l)
	}
	for _, l := range c.lanes {
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			c.serve(l)
		}()
	}
	return c, nil
}

// Classes returns the class names, in the order of the model's outputs.
func (c *Classifier) Classes() []string { return append([]string(nil), c.classes...) }

// Notes says how the checkpoint was adapted when loaded (a resampled
// position table, default normalization).
func (c *Classifier) Notes() []string { return append([]string(nil), c.notes...) }

// Meta is the checkpoint's metadata.
func (c *Classifier) Meta() checkpoint.ModelMeta { return c.meta }

// WeightBytes is the memory the model's weights hold: the float32 tensors
// and the packed copies its graphs read, int8 integers with their scales
// under Precision int8 (layers' WeightBytes).
func (c *Classifier) WeightBytes() int64 { return c.model.WeightBytes() }

// InputSize returns the model's input as channels, height, width.
func (c *Classifier) InputSize() (ch, h, w int) { return c.c, c.h, c.w }

func (c *Classifier) meanStd() (mean, std []float64) { return c.mean, c.std }

// Stats counts the work done so far.
type Stats struct {
	Batches  int64 // graph runs
	Images   int64 // images in them (Images/Batches is the mean batch)
	MaxBatch int64 // the largest batch run
}

// Stats returns how many batches and images the lanes have run.
func (c *Classifier) Stats() Stats {
	return Stats{Batches: c.batches.Load(), Images: c.images.Load(), MaxBatch: c.maxSeen.Load()}
}

// Close stops the lanes and frees their graphs. Requests still waiting fail
// with ErrClosed. Safe to call more than once.
func (c *Classifier) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	close(c.quit)
	c.wg.Wait()
	for {
		select {
		case it := <-c.queue:
			it.req.fail(ErrClosed)
		default:
			c.closeLanes()
			return nil
		}
	}
}

func (c *Classifier) closeLanes() {
	for _, l := range c.lanes {
		l.close()
	}
	c.lanes = nil
}

// Classify returns the top-k predictions of each image, best first. Images
// of any size and colour model are converted as the model was trained. The
// request is split into parts of at most MaxBatch images; a canceled ctx
// stops it between parts and abandons images not yet run.
func (c *Classifier) Classify(ctx context.Context, imgs []image.Image) ([][]Prediction, error) {
	out := make([][]Prediction, len(imgs))
	size := c.c * c.h * c.w
	buf := make([]float32, min(len(imgs), c.opts.MaxBatch)*size)
	for start := 0; start < len(imgs); start += c.opts.MaxBatch {
		part := imgs[start:min(start+c.opts.MaxBatch, len(imgs))]
		xs := make([][]float32, len(part))
		for i, img := range part {
			xs[i] = buf[i*size : (i+1)*size]
			if err := c.preprocess(xs[i], img); err != nil {
				return nil, &ImageError{Index: start + i, Err: err}
			}
		}
		preds, err := c.run(ctx, xs)
		if err != nil {
			var nf *NonFiniteError
			if errors.As(err, &nf) {
				nf.Index += start
			}
			return nil, err
		}
		copy(out[start:], preds)
	}
	return out, nil
}

// preprocess converts one decoded image into the model's normalized input.
func (c *Classifier) preprocess(dst []float32, img image.Image) error {
	if img == nil {
		return errors.New("nil image")
	}
	b := img.Bounds()
	if err := data.CheckPixels("in memory", image.Config{Width: b.Dx(), Height: b.Dy()}, c.opts.MaxPixels); err != nil {
		return err
	}
	u, err := data.FromImage(img, c.c)
	if err != nil {
		return err
	}
	return c.transform(dst, u)
}

// transform applies the crop (if any), resize and normalization to a CHW
// uint8 image.
func (c *Classifier) transform(dst []float32, u data.Image) error {
	if c.opts.CropPct != 0 {
		var err error
		if u, err = data.CenterCrop(u, c.h, c.w, c.opts.CropPct); err != nil {
			return err
		}
	}
	return c.pipe.Apply(dst, u, 0, 0)
}

// run classifies preprocessed inputs (at most MaxBatch of them) through
// the queue and waits for their answers.
func (c *Classifier) run(ctx context.Context, xs [][]float32) ([][]Prediction, error) {
	req := &request{ctx: ctx, out: make([][]Prediction, len(xs)), done: make(chan struct{})}
	req.left.Store(int32(len(xs)))
	if len(xs) == 0 {
		return req.out, nil
	}
	c.mu.RLock()
	if c.closed {
		c.mu.RUnlock()
		return nil, ErrClosed
	}
	sent := 0
	for i, x := range xs {
		select {
		case c.queue <- &item{x: x, i: i, req: req}:
			sent++
		case <-ctx.Done():
		}
		if sent <= i {
			break
		}
	}
	c.mu.RUnlock()
	if sent < len(xs) {
		// The lanes may still run the images already queued; they see the
		// canceled context and skip them.
		return nil, ctx.Err()
	}
	select {
	case <-req.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if err := req.firstErr(); err != nil {
		return nil, err
	}
	return req.out, nil
}

// topK turns one row of logits into the k most probable classes.
func (c *Classifier) topK(row []float32) ([]Prediction, bool) {
	mx := math.Inf(-1)
	for _, v := range row {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, false
		}
		mx = math.Max(mx, float64(v))
	}
	p := make([]float64, len(row))
	var sum float64
	for i, v := range row {
		p[i] = math.Exp(float64(v) - mx)
		sum += p[i]
	}
	idx := make([]int, len(row))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return p[idx[a]] > p[idx[b]] })
	out := make([]Prediction, c.topk)
	for j := range out {
		k := idx[j]
		out[j] = Prediction{Class: k, Label: c.classes[k], Prob: p[k] / sum}
	}
	return out, true
}
