// Command int8 measures how close int8 inference stays to float32, ours
// (-precision int8: per-row activations, per-channel weights, exact int32
// sums) against ONNX Runtime's (the graph onnxruntime.quantization's
// quantize_dynamic writes), on the same weights and the same images:
//
//	go run ./experiments/int8 -checkpoints runs/mnist_vit_tiny_3ep/best.safetensors,runs/fashion_mnist_vit_tiny_3ep/best.safetensors
//	go run ./experiments/int8 -render    # the README alone
//
// Each case is a model file of ours: a checkpoint given with -checkpoints,
// evaluated on its data set's validation split, and (-vit-s) a ViT-S/16 at
// 224 with random weights (seed 0, non-zero head) on -images random
// normal images. Ours: the Frozen graph a classify lane runs, float32 and
// int8, from a fresh load each. ONNX Runtime: the same file loaded into
// timm with strict=True and exported (ort/export_checkpoint.py),
// quantized by ort/quantize_dynamic.py (weights only, as ours; also with
// attention's products quantized, and with 7-bit weights), run by
// ort/ort_eval.js on the very inputs ours read. Each row compares one
// side's int8 with the same side's float32: top-1 agreement and the cosine
// of the logits; the float32 rows compare ours with ONNX Runtime's.
package main

import (
	_ "embed"
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"path/filepath"

	"github.com/vitgo/vit/experiments/internal/harness"
	"github.com/vitgo/vit/internal/cliflag"
	"github.com/vitgo/vit/internal/regfile"
)

//go:embed readme.md.tmpl
var readme string

var flags struct {
	checkpoints cliflag.Strings
	vitS        bool
	images      int
	timm        string
	ortDir      string
	node        string
	python      string
	work        string
}

var experiment = harness.Experiment[results]{
	Name:   "int8",
	Readme: readme,
	Flags: func(fs *flag.FlagSet) {
		fs.Var(&flags.checkpoints, "checkpoints", "model files of ours to compare on their data sets' validation splits (comma-separated)")
		fs.BoolVar(&flags.vitS, "vit-s", true, "also a ViT-S/16 at 224 with random weights on -images random images")
		fs.IntVar(&flags.images, "images", 32, "random images for the ViT-S/16 case")
		fs.StringVar(&flags.timm, "timm", filepath.Join("..", "scratch", "timm"), "a timm source tree (PYTHONPATH for export_checkpoint.py)")
		fs.StringVar(&flags.ortDir, "ort-dir", filepath.Join("..", "scratch", "ort"), "the folder whose node_modules holds onnxruntime-node")
		fs.StringVar(&flags.node, "node", "node", "the node binary")
		fs.StringVar(&flags.python, "python", "/usr/bin/python3", "the interpreter that sees Debian's python3-torch and python3-onnx")
		fs.StringVar(&flags.work, "work", filepath.Join("runs", "experiments", "int8"), "scratch folder: model files, exports, inputs, logits")
	},
	Measure: measure,
}

func main() { harness.Main(experiment) }

// results is the record.
type results struct {
	Machine string // harness.DescribeMachine
	ORT     string // ONNX Runtime's version
	ONNX    string // python3-onnx's version (the quantizer)
	Rows    []row
}

// row is one (case, side, precision) against its reference.
type row struct {
	Case      string  // the model and images
	Side      string  // "ours" or "ONNX Runtime"
	Variant   string  // fp32, int8, int8 + attention, int8, 7-bit weights
	Against   string  // the reference: the same side's fp32, or the other side's
	Images    int     //
	Top1      float64 // % (−1: no labels)
	Agree     float64 // % of images whose top-1 is the reference's
	MeanCos   float64 // mean cosine similarity of the logits to the reference's
	MinCos    float64 // the smallest
	MaxAbsLog float64 // largest |Δlogit|
}

// compare is row's numbers of got against ref (N × k logits each), with
// labels (nil: no top-1).
func compare(got, ref []float32, k int, labels []int) (r row, err error) {
	if k <= 0 || len(got) != len(ref) || len(got)%k != 0 {
		return row{}, fmt.Errorf("compare: %d and %d logits of %d classes", len(got), len(ref), k)
	}
	n := len(got) / k
	r.Images, r.Top1, r.MinCos = n, -1, 1
	hit, agree, cos := 0, 0, 0.0
	for i := range n {
		g, f := got[i*k:(i+1)*k], ref[i*k:(i+1)*k]
		p := harness.Argmax(g)
		if p == harness.Argmax(f) {
			agree++
		}
		if labels != nil && p == labels[i] {
			hit++
		}
		c := cosine(g, f)
		cos += c
		r.MinCos = min(r.MinCos, c)
		for j := range g {
			r.MaxAbsLog = max(r.MaxAbsLog, math.Abs(float64(g[j])-float64(f[j])))
		}
	}
	if labels != nil {
		r.Top1 = 100 * float64(hit) / float64(n)
	}
	r.Agree, r.MeanCos = 100*float64(agree)/float64(n), cos/float64(n)
	return r, nil
}

func cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	if aa == 0 || bb == 0 {
		return 0
	}
	return ab / math.Sqrt(aa*bb)
}

// writeF32 writes x little-endian to path.
func writeF32(path string, x []float32) error {
	b := make([]byte, 4*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return regfile.WriteFile(path, b, 0o644)
}

// readF32 reads path as little-endian float32s, n of them.
func readF32(path string, n int) ([]float32, error) {
	b, err := regfile.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) != 4*n {
		return nil, fmt.Errorf("%s: %d bytes, want %d float32s", path, len(b), n)
	}
	x := make([]float32, n)
	for i := range x {
		x[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return x, nil
}

// Cells are the row's cells in the README's table.
func (r row) Cells() []string {
	pct := func(v float64) string {
		if v < 0 {
			return "—"
		}
		return fmt.Sprintf("%.2f%%", v)
	}
	return []string{r.Case, r.Side, r.Variant, r.Against, fmt.Sprint(r.Images), pct(r.Top1), pct(r.Agree),
		fmt.Sprintf("%.6f", r.MeanCos), fmt.Sprintf("%.6f", r.MinCos), fmt.Sprintf("%.3g", r.MaxAbsLog)}
}
