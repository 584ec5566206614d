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
// the requests in flight and exits 0.
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
	"os/signal"
	"syscall"
	"time"

	"github.com/vitgo/vit/classify"
	"github.com/vitgo/vit/data"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], log.New(os.Stderr, "classify_server: ", log.LstdFlags)); err != nil {
		log.Fatalf("classify_server: %v", err)
	}
}

type server struct {
	clf       *classify.Classifier
	maxBytes  int64
	maxPixels int64
	timeout   time.Duration
	dec       classify.Decoder // limits and decode budget; NoWait: 503 when it is in use
}

// run serves until ctx ends, then shuts down gracefully.
func run(ctx context.Context, args []string, logger *log.Logger) error {
	fs := flag.NewFlagSet("classify_server", flag.ContinueOnError)
	ckpt := fs.String("checkpoint", "", "model .safetensors (required)")
	addr := fs.String("addr", "127.0.0.1:8080", "listen address")
	s := &server{}
	fs.Int64Var(&s.maxBytes, "max-bytes", 10<<20, "largest request body in bytes")
	fs.Int64Var(&s.maxPixels, "max-pixels", classify.DefaultMaxPixels, "largest image in pixels")
	fs.DurationVar(&s.timeout, "timeout", 10*time.Second, "time limit per request")
	var o classify.Options
	fs.IntVar(&o.TopK, "topk", 5, "classes per answer")
	fs.IntVar(&o.PoolSize, "pool", 1, "evaluation lanes")
	fs.IntVar(&o.MaxBatch, "batch", 1, "largest batch a lane runs")
	budget := fs.Int64("decode-budget", 0, "bytes that the decodes of requests in flight may hold (0 = half the available memory); past it, 503")
	if err := fs.Parse(args); err != nil {
		return err
	}
	s.dec = classify.Decoder{MaxPixels: s.maxPixels, NoWait: true}
	if *budget > 0 {
		s.dec.Budget = data.NewBudget(*budget)
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
		reply(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body over %d bytes", mb.Limit))
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
	} else if errors.As(err, &tl) || errors.As(err, &dt) {
		reply(w, http.StatusRequestEntityTooLarge, err.Error())
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
