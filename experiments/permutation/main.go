// Command permutation shows that a ViT without position embeddings is
// permutation-equivariant: shuffling an image's patches shuffles the patch
// tokens at every block the same way and leaves the class token (and so the
// prediction) unchanged; and measures how far a position table breaks that,
// for a random-init model and a model trained briefly on MNIST. It writes
// README.md and permutation.png into -out.
//
//	go run ./experiments/permutation
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/experiments/internal/report"
	"github.com/vitgo/vit/layers"
)

// opts are the command's flags.
type opts struct {
	out, checkpoint, workdir     string
	epochs, limitTrain, maxSteps int
	limitVal, images, perms      int
	seed                         uint64
}

func main() {
	var o opts
	flag.StringVar(&o.out, "out", "experiments/permutation", "folder for README.md and the PNG")
	flag.StringVar(&o.checkpoint, "checkpoint", "", "a trained 28×28 model (.safetensors) to use instead of training one")
	flag.StringVar(&o.workdir, "workdir", "", "where the brief training run writes (default: a temp dir, removed)")
	flag.IntVar(&o.epochs, "epochs", 2, "training budget: train.epochs (the recipe's own is 6)")
	flag.IntVar(&o.limitTrain, "limit-train", 0, "training budget: data.limit_train (0 = all 60000)")
	flag.IntVar(&o.maxSteps, "max-steps", 0, "training budget: train.max_steps (0 = off)")
	flag.IntVar(&o.limitVal, "limit-val", 2000, "test images the training run reports top-1 on (0 = all 10000)")
	flag.IntVar(&o.images, "images", 64, "test images permuted")
	flag.IntVar(&o.perms, "perms", 4, "random patch permutations per condition")
	flag.Uint64Var(&o.seed, "seed", 0, "seeds training, the random-init model and the permutations")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "permutation:", err)
		os.Exit(1)
	}
}

// condition is one model whose equivariance is measured.
type condition struct {
	weights, pos string
	m            *layers.VisionTransformer
}

func (c condition) dtype() string { return c.m.Params[0].Value.Dtype().String() }

// result aggregates one condition over the permutations.
type result struct {
	c                      condition
	maxAbs                 float64   // max |Δ| of the final tokens, over permutations
	rel, relCLS, relLogits float64   // mean over permutations
	relBlock               []float64 // after each block, mean over permutations
	changed                float64   // fraction of predictions that change
	top1Orig, top1Perm     float64
}

func run(o opts) error {
	start := time.Now()
	ckpt, trainedTop1 := o.checkpoint, math.NaN()
	trainNote := fmt.Sprintf("the checkpoint %s", o.checkpoint)
	if ckpt == "" {
		dir := o.workdir
		if dir == "" {
			d, err := os.MkdirTemp("", "vit-permutation-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(d)
			dir = d
		}
		var err error
		if ckpt, trainedTop1, err = trainBriefly(dir, o.epochs, o.limitTrain, o.maxSteps, o.limitVal, o.seed); err != nil {
			return fmt.Errorf("training: %w", err)
		}
		trainNote = fmt.Sprintf("configs/mnist_vit_tiny.yaml trained for train.epochs=%d, data.limit_train=%d, train.max_steps=%d, seed %d "+
			"(top-1 %.2f%% on the first %d test images)", o.epochs, o.limitTrain, o.maxSteps, o.seed, 100*trainedTop1, o.limitVal)
	}
	trained, meta, err := loadFloat64(ckpt)
	if err != nil {
		return err
	}
	rc := trained.Config
	rc.ZeroInitHead = false // a zero head would make every logit 0
	random, err := layers.New(rc, tensor.Float64, o.seed)
	if err != nil {
		return err
	}
	randomZero, err := layers.New(rc, tensor.Float64, o.seed)
	if err != nil {
		return err
	}
	zeroPos(randomZero)
	trainedZero, _, err := loadFloat64(ckpt)
	if err != nil {
		return err
	}
	zeroPos(trainedZero)
	trainedZero32, err := narrow(trainedZero)
	if err != nil {
		return err
	}
	conds := []condition{
		{"random init", "zeroed", randomZero},
		{"random init", "random init (trunc. normal, std 0.02)", random},
		{"trained", "zeroed", trainedZero},
		{"trained", "zeroed", trainedZero32},
		{"trained", "learned", trained},
	}

	x, labels, err := testImages(o.images, meta.Mean, meta.Std)
	if err != nil {
		return err
	}
	c := trained.Config
	gh, gw := c.Grid()
	rng := rand.New(rand.NewPCG(o.seed, 11))
	var perms [][]int
	for range o.perms {
		perms = append(perms, permutation(gh*gw, rng))
	}
	var results []result
	for _, cd := range conds {
		r, err := measure(cd, x, labels, perms)
		if err != nil {
			return fmt.Errorf("%s / %s: %w", cd.weights, cd.pos, err)
		}
		results = append(results, r)
		fmt.Fprintf(os.Stderr, "%s, pos %s, %s: rel %.3g (%.0fs)\n", cd.weights, cd.pos, cd.dtype(), r.rel, time.Since(start).Seconds())
	}

	var tbl strings.Builder
	writeTables(&tbl, results, c.Depth)
	fmt.Print(tbl.String())
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	png := filepath.Join(o.out, "permutation.png")
	if err := plotRel(results, c.Depth, png); err != nil {
		return fmt.Errorf("plot %s: %w", png, err)
	}
	return writeReadme(filepath.Join(o.out, "README.md"), tbl.String(), trainNote, o, c, time.Since(start))
}

// measure runs a condition on the original images and on each permutation
// of their patches.
func measure(cd condition, x []float64, labels []int, perms [][]int) (result, error) {
	m := cd.m
	c := m.Config
	n, t, d, k := len(labels), c.NumPatches()+1, c.EmbedDim, c.NumClasses
	orig, err := forward(m, x, n)
	if err != nil {
		return result{}, err
	}
	// The residual stream after each block, from depth-k copies of the model.
	var heads []*layers.VisionTransformer
	var headsOrig [][]float64
	for k := 1; k < c.Depth; k++ {
		mk, err := truncated(m, k)
		if err != nil {
			return result{}, err
		}
		o, err := forward(mk, x, n)
		if err != nil {
			return result{}, err
		}
		heads, headsOrig = append(heads, mk), append(headsOrig, o.features)
	}
	r := result{c: cd, relBlock: make([]float64, c.Depth)}
	predO := argmaxRows(orig.logits, k)
	for i, p := range predO {
		if p == labels[i] {
			r.top1Orig++
		}
	}
	r.top1Orig /= float64(n)
	for _, perm := range perms {
		xp := permutePatches(x, n, c.InChans, c.ImgSize[0], c.ImgSize[1], c.PatchSize, perm)
		pr, err := forward(m, xp, n)
		if err != nil {
			return result{}, err
		}
		mx, rel, relC := tokenDiff(orig.features, pr.features, perm, n, t, d)
		r.maxAbs = math.Max(r.maxAbs, mx)
		r.rel += rel / float64(len(perms))
		r.relCLS += relC / float64(len(perms))
		r.relLogits += relDiff(orig.logits, pr.logits) / float64(len(perms))
		for i, mk := range heads {
			o, err := forward(mk, xp, n)
			if err != nil {
				return result{}, err
			}
			_, rel, _ := tokenDiff(headsOrig[i], o.features, perm, n, t, d)
			r.relBlock[i] += rel / float64(len(perms))
		}
		r.relBlock[c.Depth-1] += rel / float64(len(perms))
		predP := argmaxRows(pr.logits, k)
		for i := range predP {
			if predP[i] != predO[i] {
				r.changed += 1 / float64(n*len(perms))
			}
			if predP[i] == labels[i] {
				r.top1Perm += 1 / float64(n*len(perms))
			}
		}
	}
	return r, nil
}

func writeTables(w io.Writer, rs []result, depth int) {
	fmt.Fprintln(w, "| weights | pos_embed | dtype | max \\|Δ\\| final tokens | rel. Δ final tokens | rel. Δ class token | rel. Δ logits | predictions changed | top-1 original → permuted |")
	fmt.Fprintln(w, "|---|---|---|---:|---:|---:|---:|---:|---|")
	for _, r := range rs {
		fmt.Fprintf(w, "| %s | %s | %s | %.2e | %.2e | %.2e | %.2e | %.1f%% | %.1f%% → %.1f%% |\n",
			r.c.weights, r.c.pos, r.c.dtype(), r.maxAbs, r.rel, r.relCLS, r.relLogits, 100*r.changed, 100*r.top1Orig, 100*r.top1Perm)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Relative error of the patch tokens after each block (the residual stream, LayerNorm'd row by row by the final norm; read from depth-k copies of the model):")
	fmt.Fprintln(w)
	fmt.Fprint(w, "| weights | pos_embed | dtype |")
	for i := 1; i <= depth; i++ {
		fmt.Fprintf(w, " block %d |", i)
	}
	fmt.Fprintln(w)
	fmt.Fprint(w, "|---|---|---|")
	for i := 1; i <= depth; i++ {
		fmt.Fprint(w, "---:|")
	}
	fmt.Fprintln(w)
	for _, r := range rs {
		fmt.Fprintf(w, "| %s | %s | %s |", r.c.weights, r.c.pos, r.c.dtype())
		for _, v := range r.relBlock {
			fmt.Fprintf(w, " %.2e |", v)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
}

func writeReadme(path, table, trainNote string, o opts, c layers.Config, wall time.Duration) error {
	gh, gw := c.Grid()
	var b strings.Builder
	fmt.Fprintf(&b, `# Permutation equivariance without positions

Nothing in a transformer block knows where a token sits in the sequence: LayerNorm and the MLP act row by
row, and attention is a weighted sum over all tokens whose weights depend only on the tokens' contents.
So with the position table set to zero, shuffling an image's P×P patches (which shuffles the patch tokens)
must shuffle every block's outputs the same way and leave the class token — and the prediction — exactly
where it was, up to the rounding of summing in another order. A position table breaks this: the same
patch content at another position is a different token.

Setup: the default MNIST model (28×28, patch %d → %d×%d grid, D %d, depth %d, %d heads), evaluation mode
(no dropout, no drop path). The trained model is %s. The random-init model uses the same architecture,
initialised as layers.New does with seed %d but with a non-zero head (a zero head would make every logit 0).
%d test images, each condition under the same %d random permutations of the %d patches. For the patch
tokens, Δ compares patch token j of the shuffled image with patch token perm[j] of the original;
rel. Δ = ‖Δ‖/‖original‖ (Frobenius, averaged over the permutations); the class token and the logits are
compared directly. "Predictions changed" counts test images whose argmax moves.

Command (from the repository root):

    `+report.CommandLine("permutation")+`

(-checkpoint FILE uses a trained 28×28 model instead of training; -epochs, -limit-train, -max-steps set the
training budget; -images, -perms the measurement.)

`, c.PatchSize, gh, gw, c.EmbedDim, c.Depth, c.NumHeads, trainNote, o.seed, o.images, o.perms, gh*gw)
	fmt.Fprintf(&b, "Wall time on the 2-core machine: %.0f s (excluding compilation, including training).\n\n", wall.Seconds())
	b.WriteString(table)
	b.WriteString("![relative error per block, log scale](permutation.png)\n")
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
