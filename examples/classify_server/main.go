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
// memory budget (-decode-budget, 503 with Retry-After past it). It gives each request -timeout
// (503 when it runs out), and on SIGTERM or SIGINT stops accepting, finishes
// the requests in flight and exits with the signal's status (143 for
// SIGTERM, 130 for SIGINT; a second signal exits at once). Concurrent
// requests are batched, up to -batch images per lane. -precision bf16
// computes the model's matrix products with bfloat16 operands and float32
// accumulation (graph.Precision; default fp32). A flag out of range is
// refused at start-up.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/vitgo/vit/classify"
	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/graph/kernels"
	"github.com/vitgo/vit/internal/signals"
)

func main() {
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
	if s.timeout <= 0 {
		return &FlagError{Flag: "-timeout", Value: s.timeout.String(), Want: "a positive duration (e.g. 10s)"}
	}
	if err := o.Precision.Validate(); err != nil || o.Precision == "" {
		return &FlagError{Flag: "-precision", Value: fmt.Sprintf("%q", o.Precision), Want: fmt.Sprintf("%q or %q", graph.FP32, graph.BF16)}
	}
	return nil
}

type server struct {
	clf       *classify.Classifier
	maxBytes  int64
	maxPixels int64
	timeout   time.Duration
	budget    int64            // -decode-budget; 0: half the available memory
	dec       classify.Decoder // limits and decode budget; NoWait: 503 when it is in use
}

// flags are the service's flags, setting s and o.
func flags(s *server, o *classify.Options) (fs *flag.FlagSet, ckpt, addr *string) {
	fs = flag.NewFlagSet("classify_server", flag.ContinueOnError)
	ckpt = fs.String("checkpoint", "", "model .safetensors (required)")
	addr = fs.String("addr", "127.0.0.1:8080", "listen address")
	fs.Int64Var(&s.maxBytes, "max-bytes", 10<<20, "largest request body in bytes")
	fs.Int64Var(&s.maxPixels, "max-pixels", classify.DefaultMaxPixels, "largest image in pixels")
	fs.DurationVar(&s.timeout, "timeout", 10*time.Second, "time limit per request")
	fs.IntVar(&o.TopK, "topk", 5, "classes per answer")
	fs.IntVar(&o.PoolSize, "pool", 1, "evaluation lanes")
	fs.IntVar(&o.MaxBatch, "batch", 8, "largest batch a lane runs: concurrent requests are batched up to it")
	fs.Int64Var(&s.budget, "decode-budget", 0, "bytes that the decodes of requests in flight may hold (0 = half the available memory); past it, 503")
	fs.StringVar((*string)(&o.Precision), "precision", string(graph.FP32), "arithmetic of the matrix products: fp32 or bf16 (bfloat16 operands, float32 accumulation)")
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
	s.dec = classify.Decoder{MaxPixels: s.maxPixels, NoWait: true}
	if s.budget > 0 {
		s.dec.Budget = data.NewBudget(s.budget)
	}
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
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/classify", s.classify)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, ErrorLog: logger}
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
	ctx, cancel := context.WithTimeout(r.Context(), s.timeout)
	defer cancel()
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.maxBytes))
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		reply(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body over this service's -max-bytes %d", mb.Limit))
		return
	} else if err != nil {
		reply(w, http.StatusBadRequest, "reading body: "+err.Error())
		return
	}
	img, release, err := s.dec.Decode(ctx, "in the request body", body)
	defer release() // the budget is held until the image is classified
	var tl *classify.TooLargeError
	var dt *data.DecodedTooLargeError
	if errors.Is(err, data.ErrBudgetBusy) {
		w.Header().Set("Retry-After", "1")
		reply(w, http.StatusServiceUnavailable, err.Error())
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
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled), errors.Is(err, classify.ErrClosed):
		reply(w, http.StatusServiceUnavailable, err.Error())
	case err != nil:
		reply(w, http.StatusInternalServerError, err.Error())
	default:
		reply(w, http.StatusOK, preds[0])
	}
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
