// Command permutation shows that a ViT without position embeddings is
// permutation-equivariant: shuffling an image's patches shuffles the patch
// tokens at every block the same way and leaves the class token (and so the
// prediction) unchanged; and measures how far a position table breaks that,
// for a random-init model and a model trained briefly on MNIST.
//
//	go run ./experiments/permutation
package main

import (
	_ "embed"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/checkpoint"
	"github.com/vitgo/vit/experiments/internal/harness"
	"github.com/vitgo/vit/internal/plotfile"
	"github.com/vitgo/vit/layers"
)

//go:embed readme.md.tmpl
var readme string

var flags struct{ images, perms int }

var experiment = harness.Experiment[results]{
	Name:   "permutation",
	Readme: readme,
	Budget: &harness.Budget{Epochs: 2, LimitVal: 2000},
	Load:   true,
	Flags: func(fs *flag.FlagSet) {
		fs.IntVar(&flags.images, "images", 64, "test images permuted")
		fs.IntVar(&flags.perms, "perms", 4, "random patch permutations per condition")
	},
	Measure: measure,
	Plot: func(r results, dir string) error {
		return plotRel(r.Rows, r.Model.Depth, filepath.Join(dir, "permutation.png"))
	},
}

func main() { harness.Main(experiment) }

// results are every condition's numbers and the setup the README names.
type results struct {
	harness.Source
	Model         struct{ Patch, GridH, GridW, Dim, Depth, Heads int }
	Budget        harness.Budget
	Images, Perms int
	Rows          []result
}

// result aggregates one condition over the permutations.
type result struct {
	Weights, Pos, Dtype            string
	MaxAbs                         float64   // max |Δ| of the final tokens, over permutations
	Rel, RelCLS, RelLogits         float64   // mean over permutations
	RelBlock                       []float64 // after each block, mean over permutations
	Changed, Top1Orig, Top1Permute float64   // fraction of predictions that change; top-1 before and after
}

// condition is one model whose equivariance is measured.
type condition struct {
	weights, pos string
	m            *layers.VisionTransformer
}

func measure(e *harness.Env) (results, error) {
	src, err := e.TrainOrLoad("configs/mnist_vit_tiny_p4.yaml")
	if err != nil {
		return results{}, err
	}
	res, cfg := results{Source: src, Budget: e.Budget, Images: flags.images, Perms: flags.perms}, src.Cfg
	// The conditions' models: the checkpoint as is, then with its position
	// table zeroed in float64 and float32; a random init with a non-zero
	// head (a zero head would make every logit 0), then with it zeroed.
	var ms [5]*layers.VisionTransformer
	var meta checkpoint.ModelMeta
	for i, dt := range []tensor.Dtype{tensor.Float64, tensor.Float64, tensor.Float32} {
		if ms[i], meta, err = harness.Model(res.Checkpoint, dt); err != nil {
			return res, err
		}
	}
	c := ms[0].Config
	rc := c
	rc.ZeroInitHead.Set(false)
	for i := 3; i < 5; i++ {
		if ms[i], err = layers.New(rc, tensor.Float64, e.Budget.Seed); err != nil {
			return res, err
		}
	}
	for _, i := range []int{1, 2, 4} {
		zeroPos(ms[i])
	}
	cfg.Model = c
	x32, labels, err := harness.Images(cfg, flags.images, meta.Mean, meta.Std)
	if err != nil {
		return res, err
	}
	x := harness.Floats[float64](x32)
	gh, gw := c.Grid()
	res.Model = struct{ Patch, GridH, GridW, Dim, Depth, Heads int }{c.PatchSize, gh, gw, c.EmbedDim, c.Depth, c.NumHeads}
	rng := rand.New(rand.NewPCG(e.Budget.Seed, 11))
	var perms [][]int
	for range flags.perms {
		perms = append(perms, rng.Perm(gh*gw))
	}
	for _, cd := range []condition{
		{"random init", "zeroed", ms[4]},
		{"random init", "random init (trunc. normal, std 0.02)", ms[3]},
		{"trained", "zeroed", ms[1]},
		{"trained", "zeroed", ms[2]},
		{"trained", "learned", ms[0]},
	} {
		r, err := measureOne(cd, x, labels, perms)
		if err != nil {
			return res, fmt.Errorf("%s / %s: %w", cd.weights, cd.pos, err)
		}
		res.Rows = append(res.Rows, r)
		e.Log.Infof("%s, pos %s, %s: rel %.3g", r.Weights, r.Pos, r.Dtype, r.Rel)
	}
	return res, nil
}

// measureOne runs a condition on the original images and on each
// permutation of their patches.
func measureOne(cd condition, x []float64, labels []int, perms [][]int) (result, error) {
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
	r := result{Weights: cd.weights, Pos: cd.pos, Dtype: m.Params[0].Value.Dtype().String(), RelBlock: make([]float64, c.Depth)}
	predO := argmaxRows(orig.logits, k)
	for i, p := range predO {
		if p == labels[i] {
			r.Top1Orig++
		}
	}
	r.Top1Orig /= float64(n)
	np := float64(len(perms))
	for _, perm := range perms {
		xp := permutePatches(x, n, c.InChans, c.ImgSize[0], c.ImgSize[1], c.PatchSize, perm)
		pr, err := forward(m, xp, n)
		if err != nil {
			return result{}, err
		}
		mx, rel, relC := tokenDiff(orig.features, pr.features, perm, n, t, d)
		r.MaxAbs = math.Max(r.MaxAbs, mx)
		r.Rel += rel / np
		r.RelCLS += relC / np
		r.RelLogits += relDiff(orig.logits, pr.logits) / np
		for i, mk := range heads {
			o, err := forward(mk, xp, n)
			if err != nil {
				return result{}, err
			}
			_, rel, _ := tokenDiff(headsOrig[i], o.features, perm, n, t, d)
			r.RelBlock[i] += rel / np
		}
		r.RelBlock[c.Depth-1] += rel / np
		for i, p := range argmaxRows(pr.logits, k) {
			if p != predO[i] {
				r.Changed += 1 / (float64(n) * np)
			}
			if p == labels[i] {
				r.Top1Permute += 1 / (float64(n) * np)
			}
		}
	}
	return r, nil
}

// zeroPos sets the whole position table (class-token row included) to 0.
func zeroPos(m *layers.VisionTransformer) { layers.InitConst(m.Param("pos_embed").Value, 0) }

// permutePatches moves the P×P patches of n images (n, C, H, W) so that
// patch j (row-major on the grid) of the result is patch perm[j] of x.
func permutePatches(x []float64, n, c, h, w, p int, perm []int) []float64 {
	out := make([]float64, len(x))
	gw := w / p
	for i := 0; i < n*c; i++ {
		img, dst := x[i*h*w:(i+1)*h*w], out[i*h*w:(i+1)*h*w]
		for j, src := range perm {
			jy, jx := j/gw*p, j%gw*p
			sy, sx := src/gw*p, src%gw*p
			for y := 0; y < p; y++ {
				copy(dst[(jy+y)*w+jx:(jy+y)*w+jx+p], img[(sy+y)*w+sx:(sy+y)*w+sx+p])
			}
		}
	}
	return out
}

// floor is where an exact zero is drawn on the log axis.
const floor = 1e-18

// plotRel draws each condition's relative error of the patch tokens after
// each block on a log y axis.
func plotRel(rs []result, depth int, path string) error {
	p := plot.New()
	p.Title.Text = "shuffled patches: ‖Δ‖/‖tokens‖ after un-shuffling"
	p.X.Label.Text = "after block (normed residual stream)"
	p.Y.Label.Text = "relative error"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = harness.Decades{}
	p.Add(plotter.NewGrid())
	for i, r := range rs {
		var xy plotter.XYs
		for b, v := range r.RelBlock {
			xy = append(xy, plotter.XY{X: float64(b + 1), Y: math.Max(v, floor)})
		}
		l, s, err := harness.LinePoints(p, fmt.Sprintf("%s, pos %s, %s", r.Weights, r.Pos, r.Dtype), plotutil.Color(i), xy)
		if err != nil {
			return err
		}
		s.Shape = plotutil.Shape(i)
		if r.Dtype == "float32" {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
	}
	p.X.Tick.Marker = harness.Integers(1, depth, 1)
	p.Y.Min, p.Y.Max = 1e-18, 1e3
	p.Legend.Top = true
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	return plotfile.SavePlot(path, p, 180*vg.Millimeter, 120*vg.Millimeter)
}
