// Command patch_equivalence checks that the two patch embeddings,
// layers.PatchConv (Gorgonia's Conv2d, stride P) and layers.PatchLinear
// (graph.Patchify + graph.Linear), compute the same function with the same
// weight [D, C, P, P]: outputs and the gradients with respect to images,
// weight and bias, in float64, for a few shapes; and that the check can fail:
// the same weight flattened in another order (channels-last, or the kernel
// transposed) gives a different output. It writes README.md and
// max_abs_diff.png into -out.
//
//	go run ./experiments/patch_equivalence
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/experiments/internal/report"
)

func main() {
	out := flag.String("out", "experiments/patch_equivalence", "folder for README.md and the PNG")
	seed := flag.Uint64("seed", 1, "seeds the random images, weights and loss cotangent")
	reps := flag.Int("reps", 5, "timed float32 forward+backward runs per form (median reported)")
	flag.Parse()
	if err := run1(*out, *seed, *reps); err != nil {
		fmt.Fprintln(os.Stderr, "patch_equivalence:", err)
		os.Exit(1)
	}
}

// shapes are the problems checked: MNIST's default, a CIFAR-sized RGB
// input, a non-square one, and ViT-B/16's 224×224 at batch 1.
var shapes = []shape{
	{name: "28×28 p4 C1 (B8, D64)", B: 8, C: 1, H: 28, W: 28, P: 4, D: 64},
	{name: "32×32 p4 C3 (B4, D192)", B: 4, C: 3, H: 32, W: 32, P: 4, D: 192},
	{name: "28×42 p7 C3 (B2, D32)", B: 2, C: 3, H: 28, W: 42, P: 7, D: 32},
	{name: "224×224 p16 C3 (B1, D768)", B: 1, C: 3, H: 224, W: 224, P: 16, D: 768},
}

// row is one shape's measurements.
type row struct {
	s                 shape
	scale             float64 // max |y|
	f64, f32          diffs   // max |conv − linear| in each dtype
	ctrlCL, ctrlT     float64 // float64 max |conv − linear with a wrongly ordered weight|
	convTime, linTime time.Duration
}

// diffs are max |conv − linear| of the output and each gradient.
type diffs struct{ out, dx, dw, db float64 }

// grads is the largest gradient difference.
func (d diffs) grads() float64 { return max(d.dx, d.dw, d.db) }

// compare runs both forms in dtype dt. With rel, each difference is divided
// by the conv result's max |value| (float32 rounding is relative).
func compare(pr problem, dt tensor.Dtype, rel bool) (diffs, result, error) {
	conv, err := run(pr, formConv, pr.w, true, dt)
	if err != nil {
		return diffs{}, result{}, fmt.Errorf("%s conv %v: %w", pr.s.name, dt, err)
	}
	lin, err := run(pr, formLinear, pr.w, true, dt)
	if err != nil {
		return diffs{}, result{}, fmt.Errorf("%s linear %v: %w", pr.s.name, dt, err)
	}
	d := func(a, b []float64) float64 {
		if rel {
			return maxAbsDiff(a, b) / maxAbs(a)
		}
		return maxAbsDiff(a, b)
	}
	return diffs{d(conv.out, lin.out), d(conv.dx, lin.dx), d(conv.dw, lin.dw), d(conv.db, lin.db)}, conv, nil
}

func run1(outDir string, seed uint64, reps int) error {
	start := time.Now()
	var rows []row
	for i, s := range shapes {
		pr := newProblem(s, seed+uint64(i))
		d64, conv, err := compare(pr, tensor.Float64, false)
		if err != nil {
			return err
		}
		d32, _, err := compare(pr, tensor.Float32, true)
		if err != nil {
			return err
		}
		cl, err := run(pr, formLinear, channelsLastOrder(pr.w, s.D, s.C, s.P), false, tensor.Float64)
		if err != nil {
			return fmt.Errorf("%s control: %w", s.name, err)
		}
		tr, err := run(pr, formLinear, transposedKernel(pr.w, s.D, s.C, s.P), false, tensor.Float64)
		if err != nil {
			return fmt.Errorf("%s control: %w", s.name, err)
		}
		ct, err := timeFwdBwd(s, formConv, reps)
		if err != nil {
			return fmt.Errorf("%s conv timing: %w", s.name, err)
		}
		lt, err := timeFwdBwd(s, formLinear, reps)
		if err != nil {
			return fmt.Errorf("%s linear timing: %w", s.name, err)
		}
		rows = append(rows, row{
			s: s, scale: maxAbs(conv.out), f64: d64, f32: d32,
			ctrlCL: maxAbsDiff(conv.out, cl.out), ctrlT: maxAbsDiff(conv.out, tr.out),
			convTime: ct, linTime: lt,
		})
		fmt.Fprintf(os.Stderr, "%s done (%.1fs)\n", s.name, time.Since(start).Seconds())
	}
	ld, gd, lscale, err := modelCheck(seed)
	if err != nil {
		return err
	}

	var tbl strings.Builder
	writeTable(&tbl, rows, ld, gd, lscale)
	fmt.Print(tbl.String())

	groups := make([]string, len(rows))
	names := []string{"float64 output", "float64 max over ∂x, ∂W, ∂b", "float32 output (relative)", "float32 max over ∂x, ∂W, ∂b (relative)",
		"control (P,P,C) order, float64 output", "control kernelᵀ, float64 output"}
	ss := make([]series, len(names))
	for i := range ss {
		ss[i].name = names[i]
	}
	for j, r := range rows {
		groups[j] = fmt.Sprintf("%dx%d p%d C%d", r.s.H, r.s.W, r.s.P, r.s.C)
		for i, v := range []float64{r.f64.out, r.f64.grads(), r.f32.out, r.f32.grads(), r.ctrlCL, r.ctrlT} {
			ss[i].values = append(ss[i].values, v)
		}
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	png := filepath.Join(outDir, "max_abs_diff.png")
	if err := logBars("conv vs unfold+linear patch embedding", "max |conv − linear| (0 drawn at 1e-18)", groups, ss, png); err != nil {
		return fmt.Errorf("plot %s: %w", png, err)
	}
	wall := time.Since(start)
	return writeReadme(filepath.Join(outDir, "README.md"), tbl.String(), wall)
}

func writeTable(w io.Writer, rows []row, logitDiff, gradDiff, logitScale float64) {
	fmt.Fprintln(w, "float64, same weight in both forms, and the two wrongly ordered controls:")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| shape | tokens | max \\|y\\| | Δ output | Δ ∂x | Δ ∂W | Δ ∂b | control (P,P,C): Δ output | control kernelᵀ: Δ output |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %d | %.3g | %.2e | %.2e | %.2e | %.2e | %.2e | %.2e |\n",
			r.s.name, r.s.tokens(), r.scale, r.f64.out, r.f64.dx, r.f64.dw, r.f64.db, r.ctrlCL, r.ctrlT)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "float32 (the training dtype), differences relative to max |conv value|, and the median forward + backward time of the patch embedding alone:")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| shape | rel. Δ output | rel. Δ ∂x | rel. Δ ∂W | rel. Δ ∂b | conv fwd+bwd ms | linear fwd+bwd ms |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %.2e | %.2e | %.2e | %.2e | %.2f | %.2f |\n",
			r.s.name, r.f32.out, r.f32.dx, r.f32.dw, r.f32.db, ms(r.convTime), ms(r.linTime))
	}
	fmt.Fprintf(w, "\nWhole model (layers.New twice from one seed, float64, 28×28 p4 C1, D64, depth 2, batch 4, head not zero-initialised): "+
		"max |Δ logits| = %.2e (max |logit| %.3g), max |Δ gradient| over the input and all parameters = %.2e.\n\n",
		logitDiff, logitScale, gradDiff)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func writeReadme(path, table string, wall time.Duration) error {
	var b strings.Builder
	b.WriteString(`# Patch embedding: Conv2d vs unfold + Linear

Both patch-embedding forms in layers/ read the same weight ` + "`patch_embed.proj.weight`" + ` [D, C, P, P]:
` + "`conv`" + ` (layers.PatchConv) runs Gorgonia's stride-P Conv2d (im2col) and moves channels last; ` + "`linear`" + `
(layers.PatchLinear) unfolds each patch into a row ordered channel, row, column (graph.Patchify) and
multiplies by the weight flattened to (D, C·P·P) (graph.Linear). This experiment shows they are the same
function: with copied weights, in float64, the outputs and the gradients of a scalar loss sum(y ⊙ R)
(R fixed random) with respect to the images, the weight and the bias differ only by rounding.

The two controls show the comparison can fail. They feed the linear form the same weight flattened in the
wrong order: *(P,P,C)* is the order a channels-last unfold (einops ` + "`(p1 p2 c)`" + `) needs, copied without
permuting; *kernelᵀ* swaps the kernel's rows and columns. With one channel the (P,P,C) order equals
(C,P,P), so that control is exactly 0 for C1 — the layout bug only shows with colour images — while the
transposed kernel is wrong for every shape.

Δ is max |conv − linear| over all elements; max |y| is the output's scale. In float64 both forms reach
the same gonum Dgemm with the same operands, so most differences are exactly 0. In float32 the linear
form runs our sgemm kernels (graph/kernels) and Conv2d Gorgonia's own matmul, so they differ by float32
rounding; those differences are given relative to the largest |value| of the conv result. The timing columns are the median float32 forward + backward of the patch
embedding alone (shared 2-core machine; noise).

Command (from the repository root):

    ` + report.CommandLine("patch_equivalence") + `

`)
	fmt.Fprintf(&b, "Wall time on the 2-core machine: %.0f s (excluding compilation).\n\n", wall.Seconds())
	b.WriteString(table)
	b.WriteString("\n![max |diff| per shape, log scale](max_abs_diff.png)\n")
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
