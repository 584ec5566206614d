// Command eval evaluates a checkpoint on a data set's validation split.
//
//	go run ./cmd/eval -checkpoint FILE [-config FILE] [-set key=value]… [-img-size N | -img-size HxW]
//	    [-interp bicubic|bilinear] [-ema] [-precision fp32|bf16|int8] [-results FILE] [-predictions FILE] [-confusion-png FILE]
//	go run ./cmd/eval -checkpoint FILE -images PATH… [-topk K] [-crop-pct P] [-max-pixels N] [-precision fp32|bf16|int8]
//	    [-predictions out.csv|.json|.jsonl] [-strict]
//
// The model config, normalization and class names come from the checkpoint;
// the data set from -config/-set (default: the validation split of the data
// set the checkpoint was trained on). At another image size pos_embed is
// resampled on the fly; the patch size never changes. With -images it
// classifies unlabelled image files instead (see images.go). -precision
// bf16 computes every matrix product with bfloat16 operands and float32
// accumulation, -precision int8 the Linear layers but the head with int8
// weights and activations and int32 accumulation (dynamic quantization,
// graph.INT8); the default fp32 is float32 throughout.
//
// Images whose logits hold a NaN or an infinity count as wrong; their number
// is printed as a warning and written as "non_finite" in -results. SIGINT or
// SIGTERM stops the evaluation (or -images) before its next batch and exits
// with status 128+signal (130 for SIGINT, 143 for SIGTERM), writing no
// report; a second signal exits at once.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/vitgo/vit/checkpoint"
	"github.com/vitgo/vit/evaluate"
	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/graph/kernels"
	"github.com/vitgo/vit/internal/cliflag"
	"github.com/vitgo/vit/internal/signals"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/report"
	"github.com/vitgo/vit/train"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run is the command: read the flags, then either classify -images or
// evaluate the checkpoint on a validation split. It returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	c, status := parseFlags(args, stderr)
	if c == nil {
		return status
	}
	if len(c.imgs.paths) > 0 || len(c.rest) > 0 {
		return runImages(c.imgs, c.rest, c.opts, c.preds, c.flags, stdout, stderr)
	}
	if status := c.chooseData(stderr); status != 0 {
		return status
	}
	return c.evaluate(stdout, stderr)
}

// command is the parsed command line.
type command struct {
	flags   *flag.FlagSet
	opts    evaluate.Options // the checkpoint and how to evaluate it
	files   report.EvalFiles // -results, -predictions, -confusion-png
	cfgPath string           // -config
	sets    cliflag.Strings  // -set
	preds   string           // -predictions
	imgs    *imageFlags      // -images and its flags
	rest    []string         // positional arguments: more images
}

// parseFlags reads the flags and checks them against each other; on a bad
// command line it reports it and returns nil and the exit status.
func parseFlags(args []string, stderr io.Writer) (*command, int) {
	flag := flag.NewFlagSet("eval", flag.ContinueOnError)
	flag.SetOutput(stderr)
	c := &command{flags: flag}
	ckpt := flag.String("checkpoint", "", "model .safetensors to evaluate (required)")
	flag.StringVar(&c.cfgPath, "config", "", "YAML config whose data section (and train.eval_batch_size) to use")
	flag.Var(&c.sets, "set", "override a config key, e.g. -set data.limit_val=1000 (repeatable)")
	imgSize := flag.String("img-size", "", "evaluate at N or HxW (pos_embed resampled)")
	interp := flag.String("interp", "bicubic", "pos_embed resampling: bicubic or bilinear")
	ema := flag.Bool("ema", false, "evaluate the EMA weights saved beside the checkpoint")
	prec := graph.FP32
	flag.Var(&prec, "precision", "arithmetic of the matrix products: fp32, bf16 (bfloat16 operands, float32 accumulation) or int8 (dynamic quantization of the Linear layers)")
	results := flag.String("results", "", "write the results as JSON here")
	flag.StringVar(&c.preds, "predictions", "", "write per-image predictions as CSV here (with -images: .csv, .json or .jsonl)")
	conf := flag.String("confusion-png", "", "draw the confusion matrix as PNG here")
	c.imgs = addImageFlags(flag)
	var err error
	if c.rest, err = parseInterleaved(flag, args); err != nil {
		return nil, 2
	}
	if !checkKernels(prec, stderr) {
		return nil, 2
	}
	if *ckpt == "" {
		fmt.Fprintln(stderr, "eval: -checkpoint is required")
		flag.Usage()
		return nil, 2
	}
	if err := cliflag.DistinctOutputs(
		cliflag.Path{Flag: "-checkpoint", Path: *ckpt}, cliflag.Path{Flag: "-config", Path: c.cfgPath},
		cliflag.Path{Flag: "-results", Path: *results, Output: true},
		cliflag.Path{Flag: "-predictions", Path: c.preds, Output: true},
		cliflag.Path{Flag: "-confusion-png", Path: *conf, Output: true},
	); err != nil {
		fmt.Fprintf(stderr, "eval: %v\n", err)
		return nil, 2
	}
	c.opts = evaluate.Options{Checkpoint: *ckpt, Interp: *interp, EMA: *ema, Precision: prec}
	c.files = report.EvalFiles{Results: *results, Predictions: c.preds, Confusion: *conf}
	if *imgSize != "" {
		s, err := parseSize(*imgSize)
		if err != nil {
			fmt.Fprintf(stderr, "eval: -img-size: %v\n", err)
			return nil, 2
		}
		c.opts.ImgSize = &s
	}
	return c, 0
}

// checkKernels refuses a VIT_BF16_KERNEL that names no bf16 kernel (or one
// this CPU cannot run) and, with -precision bf16, says which kernel runs
// (as a warning when the note is one).
func checkKernels(prec graph.Precision, stderr io.Writer) bool {
	if err := kernels.CheckBF16KernelEnv(); err != nil {
		fmt.Fprintf(stderr, "eval: %v\n", err)
		return false
	}
	if prec == graph.BF16 {
		if line, warn := kernels.BF16KernelNote(); warn {
			fmt.Fprintf(stderr, "eval: warning: %s\n", line)
		} else {
			fmt.Fprintf(stderr, "eval: %s\n", line)
		}
	}
	return true
}

// chooseData sets the validation split from -config and -set; without
// either, evaluate.Checkpoint takes the checkpoint's data set with its
// defaults. -set alone applies over the checkpoint's data set. It returns
// a non-zero exit status after reporting an error.
func (c *command) chooseData(stderr io.Writer) int {
	if c.cfgPath == "" && len(c.sets) == 0 {
		return 0
	}
	var cfg train.Config
	var err error
	if c.cfgPath != "" {
		cfg, err = train.LoadConfig(c.cfgPath, c.sets)
	} else {
		_, meta, _, rerr := checkpoint.ReadModel(c.opts.Checkpoint)
		if rerr != nil {
			fmt.Fprintf(stderr, "eval: %v\n", rerr)
			return 1
		}
		var pre []string
		if meta.Dataset != "" {
			pre = []string{"data.name=" + strconv.Quote(meta.Dataset)}
		}
		cfg, err = train.ParseConfig(nil, append(pre, c.sets...))
	}
	if err != nil {
		fmt.Fprintf(stderr, "eval: %v\n", err)
		if a := cliflag.SetAdvice(err); a != "" {
			fmt.Fprintf(stderr, "eval: %s\n", a)
		}
		return 2
	}
	l := cfg.EvalLoader()
	c.opts.Loader = &l
	return 0
}

// evaluate runs the evaluation, writing the report files (each atomically,
// none on failure or interruption), and prints the result. A signal stops
// it before its next batch with status 128+signal.
func (c *command) evaluate(stdout, stderr io.Writer) int {
	ctx, stop := signals.Context(context.Background(), stderr, "stopping the evaluation")
	defer stop()
	reps, err := report.NewEvalReports(c.files)
	if err != nil {
		fmt.Fprintf(stderr, "eval: %v\n", err)
		return 1
	}
	r, meta, notes, err := evaluate.CheckpointReported(ctx, c.opts, reps)
	if errors.Is(err, evaluate.ErrInterrupted) {
		fmt.Fprintf(stderr, "eval: %v; no report written\n", err)
		return signals.ExitStatus(ctx) // 130 for SIGINT, 143 for SIGTERM
	}
	if ee := (*checkpoint.EMAError)(nil); errors.As(err, &ee) {
		fmt.Fprintf(stderr, "eval: -ema: %v\n", err)
		return 1
	}
	if err != nil {
		fmt.Fprintf(stderr, "eval: %v\n", err)
		return 1
	}
	if msg := r.Warning(); msg != "" {
		fmt.Fprintf(stderr, "eval: warning: %s\n", msg)
	}
	for _, n := range notes {
		fmt.Fprintf(stdout, "note: %s\n", n)
	}
	report.FormatEval(stdout, r, meta.Classes)
	return 0
}

// parseSize reads "N" or "HxW".
func parseSize(s string) (layers.Size2, error) {
	h, w, ok := strings.Cut(s, "x")
	if !ok {
		w = h
	}
	a, err1 := strconv.Atoi(h)
	b, err2 := strconv.Atoi(w)
	if err1 != nil || err2 != nil || a <= 0 || b <= 0 {
		return layers.Size2{}, fmt.Errorf("want N or HxW, got %q", s)
	}
	if a > layers.MaxImgSide || b > layers.MaxImgSide {
		return layers.Size2{}, fmt.Errorf("%q: each side must be at most %d (the bound on model.img_size)", s, layers.MaxImgSide)
	}
	return layers.Size2{a, b}, nil
}
