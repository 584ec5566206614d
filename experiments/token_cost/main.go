// Command token_cost counts what a ViT's token count costs: for 28×28 and
// 224×224 inputs and the patch sizes that tile them, the tokens, the
// attention-score elements, the forward FLOPs of each matrix product (patch
// projection, qkv, QKᵀ, PV, attention projection, MLP, head) for one fixed
// width, and the measured time of a training step. It writes README.md and
// token_cost.png into -out.
//
//	go run ./experiments/token_cost
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/vitgo/vit/experiments/internal/report"
	"github.com/vitgo/vit/layers"
)

// opts are the command's flags.
type opts struct {
	out               string
	dim, depth, heads int
	mlp               float64
	batch28, batch224 int
	steps             int
	seed              uint64
	measure           bool
}

func main() {
	var o opts
	flag.StringVar(&o.out, "out", "experiments/token_cost", "folder for README.md and the PNG")
	flag.IntVar(&o.dim, "dim", 192, "embed_dim D")
	flag.IntVar(&o.depth, "depth", 6, "depth L")
	flag.IntVar(&o.heads, "heads", 3, "num_heads H")
	flag.Float64Var(&o.mlp, "mlp", 4, "mlp_ratio")
	flag.IntVar(&o.batch28, "batch28", 16, "training-step batch for 28×28 inputs")
	flag.IntVar(&o.batch224, "batch224", 4, "training-step batch for 224×224 inputs")
	flag.IntVar(&o.steps, "steps", 5, "timed training steps per case (the fastest is reported), after one warm-up step")
	flag.Uint64Var(&o.seed, "seed", 0, "seeds the weights and the random batch")
	flag.BoolVar(&o.measure, "measure", true, "time training steps (false: FLOP counts only)")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "token_cost:", err)
		os.Exit(1)
	}
}

// cases are the inputs and the patch sizes that tile them.
var cases = []struct {
	size, chans, classes int
	patches              []int
}{
	{28, 1, 10, []int{2, 4, 7, 14}},
	{224, 3, 1000, []int{8, 14, 16, 32}},
}

// row is one (input size, patch size) case.
type row struct {
	cfg    layers.Config
	batch  int
	flops  map[string]float64
	stepMs float64 // per image; 0 when not measured
}

func (r row) tokens() int { return r.cfg.NumPatches() + 1 }

func run(o opts) error {
	start := time.Now()
	var rows []row
	for _, cs := range cases {
		for _, p := range cs.patches {
			c := layers.DefaultConfig()
			c.ImgSize, c.PatchSize, c.InChans, c.NumClasses = layers.Size2{cs.size, cs.size}, p, cs.chans, cs.classes
			c.EmbedDim, c.Depth, c.NumHeads, c.MLPRatio = o.dim, o.depth, o.heads, o.mlp
			if err := c.Validate(); err != nil {
				return err
			}
			r := row{cfg: c, batch: o.batch28, flops: flops(c)}
			if cs.size != 28 {
				r.batch = o.batch224
			}
			if o.measure {
				d, err := stepTime(c, r.batch, o.steps, o.seed)
				if err != nil {
					return fmt.Errorf("%v p%d: %w", c.ImgSize, p, err)
				}
				r.stepMs = float64(d.Microseconds()) / 1000 / float64(r.batch)
				fmt.Fprintf(os.Stderr, "%v p%d: T=%d, %.2f ms/image (%.0fs)\n", c.ImgSize, p, r.tokens(), r.stepMs, time.Since(start).Seconds())
			}
			rows = append(rows, r)
		}
	}
	var tbl strings.Builder
	writeTable(&tbl, rows, o)
	fmt.Print(tbl.String())
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	png := filepath.Join(o.out, "token_cost.png")
	if err := plotCost(rows, o, png); err != nil {
		return fmt.Errorf("plot %s: %w", png, err)
	}
	return writeReadme(filepath.Join(o.out, "README.md"), tbl.String(), o, time.Since(start))
}

// gflops is achieved training throughput, counting a step as 3× the forward
// FLOPs (backward ≈ 2× forward).
func (r row) gflops() float64 {
	if r.stepMs == 0 {
		return 0
	}
	return 3 * total(r.flops) / (r.stepMs / 1000) / 1e9
}

func writeTable(w io.Writer, rows []row, o opts) {
	fmt.Fprintln(w, "Forward MFLOPs per image by part (a multiply-add counts 2):")
	fmt.Fprintln(w)
	fmt.Fprint(w, "| input | P | grid | tokens T | score elements H·T² per block | ×depth |")
	for _, p := range parts {
		fmt.Fprintf(w, " %s |", p)
	}
	fmt.Fprintln(w, " total | T² share | train step ms/image | achieved GFLOP/s |")
	fmt.Fprint(w, "|---|---:|---|---:|---:|---:|")
	for range parts {
		fmt.Fprint(w, "---:|")
	}
	fmt.Fprintln(w, "---:|---:|---:|---:|")
	for _, r := range rows {
		c := r.cfg
		gh, gw := c.Grid()
		t := r.tokens()
		fmt.Fprintf(w, "| %dx%d C%d | %d | %dx%d | %d | %s | %s |", c.ImgSize[0], c.ImgSize[1], c.InChans, c.PatchSize, gh, gw, t,
			commas(c.NumHeads*t*t), commas(c.Depth*c.NumHeads*t*t))
		for _, p := range parts {
			fmt.Fprintf(w, " %s |", mflop(r.flops[p]))
		}
		step, gf := "–", "–"
		if r.stepMs > 0 {
			step, gf = fmt.Sprintf("%.2f (B=%d)", r.stepMs, r.batch), fmt.Sprintf("%.1f", r.gflops())
		}
		fmt.Fprintf(w, " %s | %.0f%% | %s | %s |\n", mflop(total(r.flops)), 100*quadShare(r.flops), step, gf)
	}
	fmt.Fprintln(w)
}

// mflop formats FLOPs as MFLOPs with three significant digits.
func mflop(f float64) string {
	m := f / 1e6
	switch {
	case m >= 100:
		return fmt.Sprintf("%.0f", m)
	case m >= 1:
		return fmt.Sprintf("%.3g", m)
	default:
		return fmt.Sprintf("%.2g", m)
	}
}

// commas groups an integer's digits by thousands.
func commas(n int) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, ch := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(ch)
	}
	return b.String()
}

// byTokens returns the rows sorted by token count (stable).
func byTokens(rows []row) []row {
	s := append([]row(nil), rows...)
	sort.SliceStable(s, func(i, j int) bool { return s[i].tokens() < s[j].tokens() })
	return s
}

func writeReadme(path, table string, o opts, wall time.Duration) error {
	hid := int(float64(o.dim) * o.mlp)
	var b strings.Builder
	fmt.Fprintf(&b, `# What tokens cost

A ViT's patch size sets its token count T = (H/P)·(W/P) + 1 (the class token). Every per-token layer —
the qkv, attention-output and MLP projections — costs O(T·D²); attention's two products, the scores QKᵀ
and the weighted sum PV, cost O(T²·D); the patch projection costs 2·C·H·W·D whatever P is, and the head
reads one token. This experiment counts the forward FLOPs of each part for 28×28 (MNIST, C=1, 10 classes)
and 224×224 (ImageNet, C=3, 1000 classes) inputs at the patch sizes that tile them, for one fixed width —
**D = %d, depth %d, %d heads, mlp_ratio %g (hidden %d)**, qkv bias, class-token readout — and measures a
training step (forward, cross entropy, backward, clipping, AdamW; float32, random data, the fastest of %d
steps after a warm-up) at a small batch.

Per block the linear parts cost 2·T·D·(3D + D + 2·Dh) = %g·T·D² FLOPs and the quadratic ones 4·T²·D, so
the quadratic share reaches one half at T = %g·D = %.0f tokens; below that the T² term is the smaller one
but it grows twice as fast on the log-log plot (slope 2 against 1). Halving P multiplies T by about 4, the
linear parts by 4 and the attention products by 16. Score elements are H·T² per image per block — the
softmax matrix each block keeps for the backward pass (× batch × depth in memory).

The measured time per image follows the FLOPs only roughly: small T (few, skinny matrices) runs far
below the machine's peak, so the achieved GFLOP/s column (3 × forward FLOPs / step time) rises with T.
Timings are on a shared 2-core machine and vary by tens of percent between runs; the FLOP columns are exact.

Command (from the repository root):

    `+report.CommandLine("token_cost")+`

(-dim, -depth, -heads, -mlp change the width; -batch28, -batch224, -steps the timing budget; -measure=false
prints the FLOP counts only.)

`, o.dim, o.depth, o.heads, o.mlp, hid, o.steps, 8+4*o.mlp, 2+o.mlp, (2+o.mlp)*float64(o.dim))
	fmt.Fprintf(&b, "Wall time on the 2-core machine: %.0f s (excluding compilation).\n\n", wall.Seconds())
	b.WriteString(table)
	b.WriteString("![forward FLOPs by part vs tokens, and measured step time, log-log](token_cost.png)\n")
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
