// Command classify_server is an example web service around package classify:
// POST /classify with a PNG, JPEG or GIF body answers its top-k classes.
//
//	go run ./examples/classify_server -checkpoint runs/mnist_vit_tiny/best.safetensors -addr 127.0.0.1:8080
//	curl --data-binary @digit.png http://127.0.0.1:8080/classify
//	{"predictions":[{"class":7,"label":"7","prob":…},…]}
//
// It limits the body size (-max-bytes, 413) and the pixel count (-max-pixels,
// read from the header before decoding, 413, as is a decode of more than 4
// bytes a pixel at that count); a header claiming more than its body can
// hold is 400 before anything is allocated; the decodes in flight share a
// memory budget (-decode-budget; by default half of what every memory limit
// of the process leaves free, RLIMIT_AS included) and run at most GOMAXPROCS
// at a time: requests past either wait their turn, first come first served,
// until their -timeout (then 503 naming the flag). -timeout (at least
// 100ms) bounds each request: its headers, then its body, decode and
// answer (a body arriving slower is cut off with 408), and on SIGTERM or SIGINT stops accepting, finishes
// the requests in flight and exits with the signal's status (143 for
// SIGTERM, 130 for SIGINT; a second signal exits at once). Concurrent
// requests are batched, up to -batch images per lane. -precision bf16
// computes the model's matrix products with bfloat16 operands and float32
// accumulation, -precision int8 its Linear products but the head's with
// int8 weights and activations (dynamic quantization, graph.INT8; default
// fp32). A flag out of range is
// refused at start-up.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image"
	"log"
	"net"
	"net/http"
	"os"
	"runtime"
	"time"

	"github.com/vitgo/vit/classify"
	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/graph/kernels"
	"github.com/vitgo/vit/internal/meminfo"
	"github.com/vitgo/vit/internal/signals"
)

func main() {
	meminfo.LimitRuntime() // under ulimit -v, collect before the limit, not crash at it
	ctx, stop := signals.Context(context.Background(), os.Stderr, "shutting down: finishing the requests in flight")
	err := run(ctx, os.Args[1:], log.New(os.Stderr, "classify_server: ", log.LstdFlags))
	stop()
	if err != nil {
		log.Printf("classify_server: %v", err)
		if errors.As(err, new(*FlagError)) {
			os.Exit(2)
		}
		os.Exit(1)
	}
	if ctx.Err() != nil {
		os.Exit(signals.ExitStatus(ctx)) // shut down by a signal
	}
}

// FlagError is a flag whose value the service cannot run with.
type FlagError struct {
	Flag  string // its name, with the dash
	Value string
	Want  string
}

func (e *FlagError) Error() string { return fmt.Sprintf("%s %s: want %s", e.Flag, e.Value, e.Want) }

// checkFlags refuses values that would make every request fail (a body
// limit of -5 bytes answers 413, a timeout of -1s 503) or the service not
// start.
func (s *server) checkFlags(o classify.Options) error {
	for _, f := range []struct {
		name string
		v    int64
	}{{"-max-bytes", s.maxBytes}, {"-max-pixels", s.maxPixels}, {"-topk", int64(o.TopK)}, {"-pool", int64(o.PoolSize)}, {"-batch", int64(o.MaxBatch)}} {
		if f.v < 1 {
			return &FlagError{Flag: f.name, Value: fmt.Sprint(f.v), Want: "a positive number"}
		}
	}
	if s.budget < 0 {
		return &FlagError{Flag: "-decode-budget", Value: fmt.Sprint(s.budget), Want: "0 (half the available memory) or a positive number of bytes"}
	}
	if s.timeout < MinTimeout {
		return &FlagError{Flag: "-timeout", Value: s.timeout.String(), Want: fmt.Sprintf("a duration of at least %v (e.g. 10s)", MinTimeout)}
	}
	if err := o.Precision.Validate(); err != nil || o.Precision == "" {
		return &FlagError{Flag: "-precision", Value: fmt.Sprintf("%q", o.Precision), Want: fmt.Sprintf("%q, %q or %q", graph.FP32, graph.BF16, graph.INT8)}
	}
	return nil
}

// MinTimeout is the shortest -timeout accepted: below it not even a small
// image's decode and forward pass fit, and every request would be 503.
const MinTimeout = 100 * time.Millisecond

type server struct {
	clf       *classify.Classifier
	maxBytes  int64
	maxPixels int64
	timeout   time.Duration
	budget    int64            // -decode-budget; 0: half the available memory
	dec       classify.Decoder // limits and decode budget, waited for until the request's deadline
	decoders  *data.Budget     // decodes running at once (GOMAXPROCS), one unit each, first come first served
	bodies    *data.Budget     // bytes of request bodies held, as many as the decode budget
}

// flags are the service's flags, setting s and o.
func flags(s *server, o *classify.Options) (fs *flag.FlagSet, ckpt, addr *string) {
	fs = flag.NewFlagSet("classify_server", flag.ContinueOnError)
	ckpt = fs.String("checkpoint", "", "model .safetensors (required)")
	addr = fs.String("addr", "127.0.0.1:8080", "listen address")
	fs.Int64Var(&s.maxBytes, "max-bytes", 10<<20, "largest request body in bytes")
	fs.Int64Var(&s.maxPixels, "max-pixels", classify.DefaultMaxPixels, "largest image in pixels")
	fs.DurationVar(&s.timeout, "timeout", 10*time.Second, "time limit per request: its headers, then its body, decode and answer (at least 100ms)")
	fs.IntVar(&o.TopK, "topk", 5, "classes per answer")
	fs.IntVar(&o.PoolSize, "pool", 1, "evaluation lanes")
	fs.IntVar(&o.MaxBatch, "batch", 8, "largest batch a lane runs: concurrent requests are batched up to it")
	fs.Int64Var(&s.budget, "decode-budget", 0, "bytes that the decodes of requests in flight may hold (0 = half of what the memory limits leave: MemAvailable, the cgroup, RLIMIT_AS, RLIMIT_DATA); past it requests wait their turn until -timeout")
	fs.StringVar((*string)(&o.Precision), "precision", string(graph.FP32), "arithmetic of the matrix products: fp32, bf16 (bfloat16 operands, float32 accumulation) or int8 (dynamic quantization of the Linear layers)")
	return fs, ckpt, addr
}

// run serves until ctx ends, then shuts down gracefully.
func run(ctx context.Context, args []string, logger *log.Logger) error {
	s := &server{}
	var o classify.Options
	fs, ckpt, addr := flags(s, &o)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := s.checkFlags(o); err != nil {
		return err
	}
	if err := kernels.CheckBF16KernelEnv(); err != nil {
		return err
	}
	s.dec = classify.Decoder{MaxPixels: s.maxPixels, NoOversize: true}
	s.decoders = data.NewBudget(int64(runtime.GOMAXPROCS(0)))
	if *ckpt == "" {
		return errors.New("-checkpoint is required")
	}
	o.MaxPixels = s.maxPixels
	clf, err := classify.Load(*ckpt, o)
	if err != nil {
		return err
	}
	defer clf.Close()
	s.clf = clf
	// The budget is sized after the model is loaded, from what the limits
	// leave then. An image costing more than the whole budget is refused
	// (503, NoOversize), not decoded alone: under a limit it would not fit.
	if s.budget > 0 {
		s.dec.Budget = data.NewBudget(s.budget)
	} else {
		total := int64(data.DefaultBudgetBytes)
		have, source := meminfo.Free()
		if have > 0 {
			total = have / 2
		}
		s.dec.Budget = data.NewBudget(total)
		logger.Printf("decode budget %d bytes (-decode-budget 0: half of %d free by %s)", s.dec.Budget.Total(), have, source)
	}
	s.bodies = data.NewBudget(max(s.dec.Budget.Total(), s.maxBytes+bytes.MinRead))
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/classify", s.classify)
	// -timeout bounds the headers, and the handler's deadline the body
	// (the connection's read deadline), the decode and the answer; the
	// response gets as long again to be written to a slow reader.
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: s.timeout, ReadTimeout: s.timeout, WriteTimeout: 2 * s.timeout, ErrorLog: logger}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	logger.Printf("listening on %s (classes %v)", ln.Addr(), clf.Classes())
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	logger.Printf("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}

func (s *server) classify(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		reply(w, http.StatusMethodNotAllowed, "POST an image to /classify")
		return
	}
	deadline := time.Now().Add(s.timeout)
	ctx, cancel := context.WithDeadline(r.Context(), deadline)
	defer cancel()
	http.NewResponseController(w).SetReadDeadline(deadline) // a slow or short body ends with the request's time
	if r.ContentLength > s.maxBytes {
		reply(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body over this service's -max-bytes %d", s.maxBytes))
		return
	}
	body, release, err := s.readBody(ctx, w, r)
	defer release() // the body's bytes are held until the request ends
	var mb *http.MaxBytesError
	var busy *busyError
	if errors.As(err, &mb) {
		reply(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body over this service's -max-bytes %d", mb.Limit))
		return
	} else if errors.As(err, &busy) {
		w.Header().Set("Retry-After", "1")
		reply(w, http.StatusServiceUnavailable, busy.Error())
		return
	} else if errors.Is(err, os.ErrDeadlineExceeded) {
		reply(w, http.StatusRequestTimeout, fmt.Sprintf("the body did not arrive within this service's -timeout %v", s.timeout))
		return
	} else if err != nil {
		reply(w, http.StatusBadRequest, "reading body: "+err.Error())
		return
	}
	img, release, err := s.decode(ctx, body)
	defer release() // the budget is held until the image is classified
	var tl *classify.TooLargeError
	var dt *data.DecodedTooLargeError
	var ob *classify.OverBudgetError
	if errors.As(err, &ob) {
		reply(w, http.StatusServiceUnavailable, fmt.Sprintf("the image needs %d bytes to decode, more than this service's whole decode budget of %d bytes (-decode-budget; by default half of what the memory limits leave)", ob.Cost, ob.Budget))
		return
	} else if errors.As(err, &busy) {
		w.Header().Set("Retry-After", "1")
		reply(w, http.StatusServiceUnavailable, busy.Error())
		return
	} else if errors.As(err, &tl) {
		reply(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the image is %d×%d = %d pixels, over this service's -max-pixels %d", tl.Width, tl.Height, int64(tl.Width)*int64(tl.Height), tl.Limit))
		return
	} else if errors.As(err, &dt) {
		reply(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the %d×%d %s image decodes to %d bytes, over this service's limit of %d bytes (%d × -max-pixels)", dt.Width, dt.Height, dt.Format, dt.Bytes, dt.Limit, data.BytesPerMaxPixel))
		return
	} else if err != nil {
		reply(w, http.StatusBadRequest, err.Error())
		return
	}
	preds, err := s.clf.Classify(ctx, []image.Image{img})
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		w.Header().Set("Retry-After", "1")
		reply(w, http.StatusServiceUnavailable, fmt.Sprintf("the request ran past this service's -timeout %v waiting for a lane (-pool)", s.timeout))
	case errors.Is(err, context.Canceled), errors.Is(err, classify.ErrClosed):
		reply(w, http.StatusServiceUnavailable, err.Error())
	case err != nil:
		reply(w, http.StatusInternalServerError, err.Error())
	default:
		reply(w, http.StatusOK, preds[0])
	}
}

// busyError is a request whose -timeout ran out before or while its image
// was decoded: waiting for a decoder (at most GOMAXPROCS run at once) or for
// the decode budget, first come first served, or in the decode itself.
type busyError struct {
	timeout time.Duration
	budget  int64 // the decode budget's size
	stage   string
	err     error
}

func (e *busyError) Error() string {
	return fmt.Sprintf("the request ran past this service's -timeout %v %s (decodes in flight share a budget of %d bytes, -decode-budget; try again later)", e.timeout, e.stage, e.budget)
}

func (e *busyError) Unwrap() error { return e.err }

// readBody reads the request's body (at most -max-bytes) once its bytes
// are free in the bodies budget, first come first served: the bodies held
// by requests in flight, those waiting for the decode budget included,
// take at most as much memory as the decode budget (both together, by
// default, what the memory limits leave). A body of known length takes
// that many bytes, one of unknown length twice -max-bytes (what reading it
// may grow to). release gives them back.
func (s *server) readBody(ctx context.Context, w http.ResponseWriter, r *http.Request) ([]byte, func(), error) {
	cost := 2*s.maxBytes + bytes.MinRead
	if r.ContentLength >= 0 {
		cost = r.ContentLength + bytes.MinRead
	}
	held, err := s.bodies.Acquire(ctx, cost)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			err = &busyError{timeout: s.timeout, budget: s.dec.Budget.Total(), stage: "waiting to read its body", err: err}
		}
		return nil, func() {}, err
	}
	release := func() { s.bodies.Release(held) }
	var buf bytes.Buffer
	if r.ContentLength >= 0 {
		buf.Grow(int(cost))
	}
	_, err = buf.ReadFrom(http.MaxBytesReader(w, r.Body, s.maxBytes))
	return buf.Bytes(), release, err
}

// decode decodes body once it is its turn: a decoder free (at most
// GOMAXPROCS decode at once, so that a crowd of large images is served a
// few at a time rather than all timing out together) and its cost free in
// the decode budget, both granted in the order of arrival. The budget is
// held until release; a request whose deadline passes meanwhile gets a
// *busyError.
func (s *server) decode(ctx context.Context, body []byte) (image.Image, func(), error) {
	busy := func(stage string, err error) error {
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return err
		}
		return &busyError{timeout: s.timeout, budget: s.dec.Budget.Total(), stage: stage, err: err}
	}
	slot, err := s.decoders.Acquire(ctx, 1)
	if err != nil {
		return nil, func() {}, busy("waiting for a decoder", err)
	}
	defer s.decoders.Release(slot)
	img, release, err := s.dec.Decode(ctx, "in the request body", body)
	if err != nil {
		return nil, release, busy("waiting for the decode budget or decoding", err)
	}
	return img, release, nil
}

// reply writes v as JSON: {"predictions": v}, or {"error": v} for a string.
func reply(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	if msg, ok := v.(string); ok {
		json.NewEncoder(w).Encode(map[string]string{"error": msg})
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"predictions": v})
}
