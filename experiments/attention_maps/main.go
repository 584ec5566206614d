// Command attention_maps shows where a ViT trained on MNIST looks: for a few
// test digits, the class token's attention over the patches in the last
// layer (mean over heads) and attention rollout (Abnar & Zuidema 2020) over
// all layers, upsampled from the 7×7 patch grid to 28×28 and overlaid on the
// images. It also measures how much of each map falls on patches holding
// ink, over many test images.
//
//	go run ./experiments/attention_maps [-epochs 6] [-limit-train 0] [-seed 0] [-set key=value]…
//	go run ./experiments/attention_maps -checkpoint runs/experiments/pos_similarity/last.safetensors
package main

import (
	"context"
	_ "embed"
	"flag"
	"fmt"
	"image"
	"image/color"
	"path/filepath"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/checkpoint"
	"github.com/vitgo/vit/evaluate"
	"github.com/vitgo/vit/experiments/internal/harness"
	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/internal/plotfile"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/train"
)

//go:embed readme.md.tmpl
var readme string

const recipe = "configs/mnist_vit_tiny_p4.yaml"

// inkThresh is the mean pixel (0…255) above which a patch counts as ink.
const inkThresh = 0.1 * 255

var flags struct{ nShow, nStats int }

var experiment = harness.Experiment[results]{
	Name:   "attention_maps",
	Readme: readme,
	Budget: &harness.Budget{Epochs: 6},
	Load:   true,
	Flags: func(fs *flag.FlagSet) {
		fs.IntVar(&flags.nShow, "n", 8, "digits drawn: the first test image of each class 0…n−1 (n ≤ 10)")
		fs.IntVar(&flags.nStats, "stats", 1000, "test images over which the ink shares are averaged")
	},
	Measure: measure,
}

func main() { harness.Main(experiment) }

// results are the ink shares and where the model came from.
type results struct {
	harness.Source
	Step      int
	Patches   int
	InkThresh float64
	Shown     []shares // the drawn digits
	Mean      shares   // over the first N test images
	N         int
	Peaks     [2]float64 // mean max share of a single patch: CLS, rollout
}

// shares are the ink statistics of one image or a mean over many.
type shares struct {
	Label, Pred        int     `json:",omitempty"`
	InkFrac, CLS, Roll float64 // share of patches with ink; share of each map's mass on them
	Correct            float64 // prediction right (1) or wrong (0), or the mean
}

func measure(e *harness.Env) (results, error) {
	if flags.nShow < 1 || flags.nShow > 10 {
		return results{}, fmt.Errorf("-n: must be in 1…10, got %d", flags.nShow)
	}
	if flags.nStats < flags.nShow {
		return results{}, fmt.Errorf("-stats: must be ≥ -n (%d), got %d", flags.nShow, flags.nStats)
	}
	src, err := e.TrainOrLoad(recipe)
	if err != nil {
		return results{}, err
	}
	res, cfg := results{Source: src, InkThresh: inkThresh}, src.Cfg
	model, meta, err := harness.Model(res.Checkpoint, tensor.Float32)
	if err != nil {
		return res, err
	}
	if meta.Model.Readout != layers.ReadoutCLS {
		e.Log.Warnf("%s reads out the %s of the tokens: its class token is not what the head sees", res.Checkpoint, meta.Model.Readout)
	}
	cfg.Model, cfg.Data.LimitVal, cfg.Train.EvalBatchSize = meta.Model, flags.nStats, 100
	res.Step, res.Patches = meta.Step, meta.Model.NumPatches()
	shown, err := analyse(model, meta, cfg, flags.nShow, &res)
	if err != nil {
		return res, err
	}
	title := fmt.Sprintf("Class-token attention of a ViT on MNIST test digits (step %d, %d layers × %d heads)",
		meta.Step, meta.Model.Depth, meta.Model.NumHeads)
	return res, plotDigits(shown, meta.Model.ImgSize[0], meta.Model.ImgSize[1], title, filepath.Join(e.Dir, "attention_maps.png"))
}

// analyse runs the model over the first cfg.Data.LimitVal test images,
// keeps the first image of each class 0…nShow−1 for the figure, and
// averages the ink shares into res.
func analyse(m *layers.VisionTransformer, meta checkpoint.ModelMeta, cfg train.Config, nShow int, res *results) ([]digit, error) {
	c := m.Config
	loader, err := train.NewEvalLoader(cfg, meta.Mean, meta.Std)
	if err != nil {
		return nil, err
	}
	ev, err := evaluate.NewMaps(m, cfg.Train.EvalBatchSize)
	if err != nil {
		return nil, err
	}
	defer ev.Close()
	gh, gw := c.Grid()
	h, w := c.ImgSize[0], c.ImgSize[1]
	shown := make([]digit, nShow)
	res.Shown = make([]shares, nShow)
	found := make([]bool, nShow)
	var sum shares
	// The attention maps of each batch, read from the graph after its forward.
	_, err = ev.Run(context.Background(), loader, func(idx, labels []int, logits []float32) error {
		var layerProbs [][]float64
		var bb, hh, tt int
		for l, node := range ev.Graph().Attn {
			p, b2, h2, t2, err := graph.AttentionProbs(node)
			if err != nil {
				return fmt.Errorf("layer %d: %w", l, err)
			}
			layerProbs = append(layerProbs, append([]float64(nil), p...))
			bb, hh, tt = b2, h2, t2
		}
		cls := clsAttention(layerProbs[len(layerProbs)-1], bb, hh, tt)
		roll, err := rollout(layerProbs, bb, hh, tt)
		if err != nil {
			return err
		}
		for i, k := range idx {
			img, _, err := loader.Dataset().Item(k)
			if err != nil {
				return err
			}
			if img.C != 1 || img.H != h || img.W != w {
				return fmt.Errorf("image %d is %d×%d×%d; this experiment draws 1-channel images at the model's %d×%d", k, img.C, img.H, img.W, h, w)
			}
			s := shares{Label: labels[i], Pred: harness.Argmax(logits[i*c.NumClasses : (i+1)*c.NumClasses])}
			s.CLS, s.InkFrac = inkMass(cls[i], img.Pix, h, w, c.PatchSize, inkThresh)
			s.Roll, _ = inkMass(roll[i], img.Pix, h, w, c.PatchSize, inkThresh)
			if s.Pred == s.Label {
				s.Correct = 1
			}
			sum.InkFrac += s.InkFrac
			sum.CLS += s.CLS
			sum.Roll += s.Roll
			sum.Correct += s.Correct
			res.Peaks[0] += floats.Max(cls[i])
			res.Peaks[1] += floats.Max(roll[i])
			res.N++
			if y := s.Label; y < nShow && !found[y] {
				found[y] = true
				d := digit{Pix: img.Pix, Label: y, Pred: s.Pred}
				if d.CLS, err = upsample(cls[i], gh, gw, h, w); err != nil {
					return err
				}
				if d.Roll, err = upsample(roll[i], gh, gw, h, w); err != nil {
					return err
				}
				shown[y], res.Shown[y] = d, s
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for y, ok := range found {
		if !ok {
			return nil, fmt.Errorf("no test image of class %d among the first %d; raise -stats", y, res.N)
		}
	}
	n := float64(res.N)
	res.Mean = shares{InkFrac: sum.InkFrac / n, CLS: sum.CLS / n, Roll: sum.Roll / n, Correct: sum.Correct / n}
	res.Peaks[0] /= n
	res.Peaks[1] /= n
	return shown, nil
}

// Uniform is the share of one patch under a uniform map.
func (r results) Uniform() float64 { return 1 / float64(r.Patches) }

// digit is one test image with its maps, each (h, w) after upsampling.
type digit struct {
	Pix         []uint8 // (h, w) grayscale
	Label, Pred int
	CLS, Roll   []float64 // (h, w) attention, any scale
}

const zoom = 4 // screen pixels per image pixel

// gray renders pix at zoom× with nearest-neighbour blocks.
func gray(pix []uint8, h, w int) *image.RGBA {
	return render(h, w, func(i int) color.RGBA { v := pix[i]; return color.RGBA{v, v, v, 255} })
}

// overlay blends the image with a colour map of m scaled to [0, 1] by its
// maximum: colour·α + gray·(1−α).
func overlay(pix []uint8, m []float64, h, w int, cm palette.ColorMap) *image.RGBA {
	hi := 0.0
	for _, v := range m {
		hi = max(hi, v)
	}
	const alpha = 0.6
	return render(h, w, func(i int) color.RGBA {
		v := 0.0
		if hi > 0 {
			v = m[i] / hi
		}
		c, err := cm.At(min(max(v, 0), 1))
		if err != nil {
			c = color.Black
		}
		r, g, b, _ := c.RGBA()
		p := float64(pix[i])
		mix := func(x uint32) uint8 { return uint8(alpha*float64(x>>8) + (1-alpha)*p + 0.5) }
		return color.RGBA{mix(r), mix(g), mix(b), 255}
	})
}

func render(h, w int, at func(i int) color.RGBA) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w*zoom, h*zoom))
	for y := range h * zoom {
		for x := range w * zoom {
			img.SetRGBA(x, y, at((y/zoom)*w+x/zoom))
		}
	}
	return img
}

// plotDigits draws a grid with one column per digit and three rows: the
// image, its last-layer CLS attention overlay, its rollout overlay.
func plotDigits(ds []digit, h, w int, title, path string) error {
	cm := moreland.ExtendedBlackBody()
	cm.SetMin(0)
	cm.SetMax(1)
	rows := []string{"image", "last-layer\nCLS attention", "attention\nrollout"}
	const tile, pad = 3 * vg.Centimeter, 0.2 * vg.Centimeter
	left, top, head := 2.8*vg.Centimeter, 1.2*vg.Centimeter, 0.8*vg.Centimeter
	W := left + vg.Length(len(ds))*(tile+pad)
	H := top + head + vg.Length(len(rows))*(tile+pad)
	img, dc, small := harness.Figure(W, H, W/2, title)
	for j, d := range ds {
		x := left + vg.Length(j)*(tile+pad)
		lbl := fmt.Sprintf("label %d, pred %d", d.Label, d.Pred)
		dc.FillText(small, vg.Point{X: x + tile/2, Y: H - top - head/2}, lbl)
		for i, im := range []image.Image{gray(d.Pix, h, w), overlay(d.Pix, d.CLS, h, w, cm), overlay(d.Pix, d.Roll, h, w, cm)} {
			y := H - top - head - vg.Length(i+1)*(tile+pad) + pad
			dc.DrawImage(vg.Rectangle{Min: vg.Point{X: x, Y: y}, Max: vg.Point{X: x + tile, Y: y + tile}}, im)
		}
	}
	small.XAlign = draw.XRight
	for i, r := range rows {
		y := H - top - head - vg.Length(i)*(tile+pad) - tile/2
		dc.FillText(small, vg.Point{X: left - 0.3*vg.Centimeter, Y: y}, r)
	}
	return plotfile.SavePNG(path, img)
}
