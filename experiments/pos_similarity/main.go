// Command pos_similarity draws the cosine similarity between the learned
// patch position embeddings of a ViT trained on MNIST (pos_embed rows
// 1…N; the class token's row 0 is left out), laid out as in the ViT paper's
// Fig. 7 (center): one small heat map per patch position, arranged on the
// 7×7 patch grid. It also measures whether same-row and same-column
// positions end up more alike than others, trained against at init.
//
//	go run ./experiments/pos_similarity [-epochs 6] [-limit-train 0] [-seed 0] [-set key=value]…
//	go run ./experiments/pos_similarity -checkpoint runs/…/last.safetensors
package main

import (
	_ "embed"
	"fmt"
	"math"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/experiments/internal/harness"
	"github.com/vitgo/vit/internal/plotfile"
	"github.com/vitgo/vit/layers"
)

//go:embed readme.md.tmpl
var readme string

const recipe = "configs/mnist_vit_tiny_p4.yaml"

var experiment = harness.Experiment[results]{
	Name:    "pos_similarity",
	Readme:  readme,
	Budget:  &harness.Budget{Epochs: 6},
	Load:    true,
	Measure: measure,
}

func main() { harness.Main(experiment) }

// results are the statistics and where the model came from.
type results struct {
	harness.Source
	Step   int
	GH, GW int
	// Stats: trained (all positions, interior), init (all, interior).
	Stats [4]stripeStats
}

func measure(e *harness.Env) (results, error) {
	src, err := e.TrainOrLoad(recipe)
	if err != nil {
		return results{}, err
	}
	res := results{Source: src}
	trained, meta, err := harness.Model(res.Checkpoint, tensor.Float32)
	if err != nil {
		return res, err
	}
	res.Step = meta.Step
	res.GH, res.GW = meta.Model.Grid()
	// The same architecture and seed before any update: what training
	// started from (train.Run initialises with layers.New(cfg.Model, …, train.seed)).
	initM, err := layers.New(meta.Model, tensor.Float32, e.Budget.Seed)
	if err != nil {
		return res, err
	}
	simT, err := similarity(trained)
	if err != nil {
		return res, fmt.Errorf("%s: %w", res.Checkpoint, err)
	}
	simI, err := similarity(initM)
	if err != nil {
		return res, err
	}
	res.Stats = [4]stripeStats{simT.stats(), simT.interior(), simI.stats(), simI.interior()}
	if err := plotGrid(simT, fmt.Sprintf("Position embedding similarity, trained (%d×%d patches, step %d)", res.GH, res.GW, meta.Step),
		filepath.Join(e.Dir, "pos_similarity.png")); err != nil {
		return res, err
	}
	return res, plotGrid(simI, fmt.Sprintf("Position embedding similarity at init (seed %d)", e.Budget.Seed),
		filepath.Join(e.Dir, "pos_similarity_init.png"))
}

// Line is one direction's stripe scores and verdicts.
type Line struct {
	Name, Singular              string
	All, Inner, InitAll, InitIn float64
	Verdict, VerdictAll         string // judged on the interior, and on the whole grid
}

// Lines are the rows' and the columns' scores.
func (r results) Lines() []Line {
	s := r.Stats
	ls := []Line{
		{Name: "rows", Singular: "row", All: s[0].MatchedRow, Inner: s[1].MatchedRow, InitAll: s[2].MatchedRow, InitIn: s[3].MatchedRow},
		{Name: "columns", Singular: "column", All: s[0].MatchedCol, Inner: s[1].MatchedCol, InitAll: s[2].MatchedCol, InitIn: s[3].MatchedCol},
	}
	for i := range ls {
		ls[i].Verdict, ls[i].VerdictAll = verdict(ls[i].Inner, ls[i].InitIn), verdict(ls[i].All, ls[i].InitAll)
	}
	return ls
}

// Both is the verdict on the combined distance-matched score.
func (r results) Both() string { return verdict(r.Stats[0].Matched, r.Stats[2].Matched) }

// verdict turns a trained distance-matched stripe score, against the same
// score at init, into a word; the rule is stated in the README.
func verdict(trained, init float64) string {
	noise := math.Max(math.Abs(init), 0.02)
	switch {
	case trained > 0.1 && trained > 3*noise:
		return "yes"
	case trained > 3*noise:
		return "weakly"
	default:
		return "no"
	}
}

// tileGrid is one position's similarity to every position, shaped as the
// patch grid, row 0 drawn at the top.
type tileGrid struct {
	p   posSim
	pos int
}

func (g tileGrid) Dims() (c, r int)   { return g.p.GW, g.p.GH }
func (g tileGrid) X(c int) float64    { return float64(c) }
func (g tileGrid) Y(r int) float64    { return float64(g.p.GH - 1 - r) }
func (g tileGrid) Z(c, r int) float64 { n := g.p.GH * g.p.GW; return g.p.Sim[g.pos*n+r*g.p.GW+c] }

// plotGrid draws the ViT paper's Fig. 7 (center) layout: for each patch
// position (row, column) a small heat map of its cosine similarity to every
// position, the tiles arranged on the patch grid, colours from −1 to 1.
func plotGrid(p posSim, title, path string) error {
	cm := moreland.SmoothBlueRed()
	cm.SetMin(-1)
	cm.SetMax(1)
	pal := cm.Palette(255)
	const tile, pad = 2.2 * vg.Centimeter, 0.15 * vg.Centimeter
	gridW := vg.Length(p.GW)*tile + vg.Length(p.GW-1)*pad
	gridH := vg.Length(p.GH)*tile + vg.Length(p.GH-1)*pad
	top, left, right, bottom := 1.4*vg.Centimeter, 1.0*vg.Centimeter, 3.2*vg.Centimeter, 1.0*vg.Centimeter
	img, dc, small := harness.Figure(left+gridW+right, bottom+gridH+top, left+gridW/2, title)
	for c := range p.GW {
		x := left + vg.Length(c)*(tile+pad) + tile/2
		dc.FillText(small, vg.Point{X: x, Y: bottom / 2}, fmt.Sprint(c+1))
	}
	small.XAlign = draw.XRight
	for r := range p.GH {
		y := bottom + gridH - vg.Length(r)*(tile+pad) - tile/2
		dc.FillText(small, vg.Point{X: left - 0.2*vg.Centimeter, Y: y}, fmt.Sprint(r+1))
	}
	for r := range p.GH {
		for c := range p.GW {
			x0 := left + vg.Length(c)*(tile+pad)
			y0 := bottom + gridH - vg.Length(r+1)*tile - vg.Length(r)*pad
			sub := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{Min: vg.Point{X: x0, Y: y0}, Max: vg.Point{X: x0 + tile, Y: y0 + tile}}}
			pl := plot.New()
			pl.HideAxes()
			pl.X.Padding, pl.Y.Padding = 0, 0
			hm := plotter.NewHeatMap(tileGrid{p: p, pos: r*p.GW + c}, pal)
			hm.Min, hm.Max = -1, 1
			pl.Add(hm)
			pl.Draw(sub)
		}
	}
	// Colour bar on the right.
	cb := plot.New()
	cb.HideX()
	cb.Y.Label.Text = "cosine similarity"
	cb.Add(&plotter.ColorBar{ColorMap: cm, Vertical: true})
	x0 := left + gridW + 0.6*vg.Centimeter
	cb.Draw(draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
		Min: vg.Point{X: x0, Y: bottom}, Max: vg.Point{X: x0 + 2.4*vg.Centimeter, Y: bottom + gridH}}})

	return plotfile.SavePNG(path, img)
}
