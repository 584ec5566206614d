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
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/experiments/internal/budget"
	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/train"
)

// inkThresh is the mean pixel (0…255) above which a patch counts as ink.
const inkThresh = 0.1 * 255

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "attention_maps: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("attention_maps", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "configs/mnist_vit_tiny.yaml", "recipe to train (YAML)")
	ckpt := fs.String("checkpoint", "", "use this trained model file instead of training one")
	nShow := fs.Int("n", 8, "digits drawn: the first test image of each class 0…n−1 (n ≤ 10)")
	nStats := fs.Int("stats", 1000, "test images over which the ink shares are averaged")
	out := fs.String("out", "runs/experiments/attention_maps", "directory for the training run")
	dir := fs.String("dir", "experiments/attention_maps", "where README.md and the PNG are written")
	noReadme := fs.Bool("no-readme", false, "print the table but do not rewrite README.md")
	var bud budget.Budget
	bud.Flags(fs, budget.Budget{LimitTrain: 0, LimitVal: 0, Epochs: 6}, "the run")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return fmt.Errorf("-dir: %w", err)
	}
	if *nShow < 1 || *nShow > 10 {
		return fmt.Errorf("-n: must be in 1…10, got %d", *nShow)
	}
	if *nStats < *nShow {
		return fmt.Errorf("-stats: must be ≥ -n (%d), got %d", *nShow, *nStats)
	}
	start := time.Now()
	log := logrus.New()
	log.SetOutput(stderr)

	path, trainedBy := *ckpt, ""
	dataCfg := data.DefaultConfig()
	if path == "" {
		overrides := bud.Overrides(*out)
		cfg, err := train.LoadConfig(*cfgPath, overrides)
		if err != nil {
			return err
		}
		log.Infof("training into %s", *out)
		if _, err := train.Run(context.Background(), cfg, train.Options{Log: log}); err != nil {
			return err
		}
		path = filepath.Join(*out, train.LastModel)
		trainedBy = fmt.Sprintf("%s with %s", *cfgPath, strings.Join(overrides, " "))
		dataCfg = cfg.Data
	}
	model, meta, _, err := train.LoadModel(path, tensor.Float32, nil, "")
	if err != nil {
		return err
	}
	if meta.Model.Readout != layers.ReadoutCLS {
		log.Warnf("%s reads out the %s of the tokens: its class token is not what the head sees", path, meta.Model.Readout)
	}
	if path == *ckpt {
		dataCfg.Name = data.DatasetName(meta.Dataset)
	}
	dataCfg.LimitTrain, dataCfg.LimitVal = 0, *nStats

	st, err := analyse(model, meta, dataCfg, *nShow)
	if err != nil {
		return err
	}
	table := formatTable(st)
	fmt.Fprint(stdout, table)
	png := filepath.Join(*dir, "attention_maps.png")
	h, w := meta.Model.ImgSize[0], meta.Model.ImgSize[1]
	title := fmt.Sprintf("Class-token attention of a ViT on MNIST test digits (step %d, %d layers × %d heads)",
		meta.Step, meta.Model.Depth, meta.Model.NumHeads)
	if err := plotDigits(st.shown, h, w, title, png); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s\n", png)
	if *noReadme {
		return nil
	}
	cmd := "go run ./experiments/attention_maps"
	if len(args) > 0 {
		cmd += " " + strings.Join(args, " ")
	}
	readme := filepath.Join(*dir, "README.md")
	if err := writeReadme(readme, cmd, time.Since(start), table, path, trainedBy, meta, st); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s\n", readme)
	return nil
}

// shares are the ink statistics of one image or a mean over many.
type shares struct {
	InkFrac, CLS, Roll float64 // share of patches with ink; share of each map's mass on them
	Correct            float64 // prediction right (1) or wrong (0), or the mean
}

// analysis is what run draws and tabulates.
type analysis struct {
	shown     []digit
	shownInk  []shares
	mean      shares
	n         int
	heatPeaks [2]float64 // mean max share of a single patch: CLS, rollout
}

// analyse runs the model over the first stats test images, keeps the first
// image of each class 0…nShow−1 for the figure, and averages the ink shares.
func analyse(m *layers.VisionTransformer, meta train.ModelMeta, dc data.Config, nShow int) (analysis, error) {
	c := m.Config
	ds, err := data.Open(dc, data.Val, c.InChans)
	if err != nil {
		return analysis{}, err
	}
	const batch = 100
	loader, err := data.NewLoader(ds, data.LoaderConfig{BatchSize: batch, ImgH: c.ImgSize[0], ImgW: c.ImgSize[1],
		NumClasses: c.NumClasses, Mean: meta.Mean, Std: meta.Std, Workers: 1,
		Augment: data.DefaultAugmentConfig(), Mixup: data.DefaultMixupConfig()})
	if err != nil {
		return analysis{}, err
	}
	ev, err := train.NewEvaluator(m, batch)
	if err != nil {
		return analysis{}, err
	}
	defer ev.Close()
	gh, gw := c.Grid()
	h, w := c.ImgSize[0], c.ImgSize[1]
	var a analysis
	a.shown = make([]digit, nShow)
	a.shownInk = make([]shares, nShow)
	found := make([]bool, nShow)
	it := loader.Epoch(0, 0)
	defer it.Close()
	for {
		b, ok, err := it.Next()
		if err != nil {
			return analysis{}, err
		}
		if !ok {
			break
		}
		logits, err := ev.Logits(b.X, b.N)
		if err != nil {
			return analysis{}, err
		}
		var layerProbs [][]float64
		var bb, hh, tt int
		for l, node := range ev.Graph().Attn {
			p, b2, h2, t2, err := graph.AttentionProbs(node)
			if err != nil {
				return analysis{}, fmt.Errorf("layer %d: %w", l, err)
			}
			layerProbs = append(layerProbs, append([]float64(nil), p...))
			bb, hh, tt = b2, h2, t2
		}
		cls := clsAttention(layerProbs[len(layerProbs)-1], bb, hh, tt)
		roll, err := rollout(layerProbs, bb, hh, tt)
		if err != nil {
			return analysis{}, err
		}
		for i := 0; i < b.N; i++ {
			img, _, err := ds.Item(b.Indices[i])
			if err != nil {
				return analysis{}, err
			}
			if img.C != 1 || img.H != h || img.W != w {
				return analysis{}, fmt.Errorf("image %d is %d×%d×%d; this experiment draws 1-channel images at the model's %d×%d", b.Indices[i], img.C, img.H, img.W, h, w)
			}
			pred := argmax(logits[i*c.NumClasses : (i+1)*c.NumClasses])
			var s shares
			s.CLS, s.InkFrac = inkMass(cls[i], img.Pix, h, w, c.PatchSize, inkThresh)
			s.Roll, _ = inkMass(roll[i], img.Pix, h, w, c.PatchSize, inkThresh)
			if pred == b.Labels[i] {
				s.Correct = 1
			}
			a.mean.InkFrac += s.InkFrac
			a.mean.CLS += s.CLS
			a.mean.Roll += s.Roll
			a.mean.Correct += s.Correct
			a.heatPeaks[0] += maxOf(cls[i])
			a.heatPeaks[1] += maxOf(roll[i])
			a.n++
			if y := b.Labels[i]; y < nShow && !found[y] {
				found[y] = true
				a.shown[y] = digit{Pix: img.Pix, Label: y, Pred: pred,
					CLS: upsample(cls[i], gh, gw, h, w), Roll: upsample(roll[i], gh, gw, h, w)}
				a.shownInk[y] = s
			}
		}
		b.Release()
	}
	for y, ok := range found {
		if !ok {
			return analysis{}, fmt.Errorf("no test image of class %d among the first %d; raise -stats", y, a.n)
		}
	}
	n := float64(a.n)
	a.mean = shares{InkFrac: a.mean.InkFrac / n, CLS: a.mean.CLS / n, Roll: a.mean.Roll / n, Correct: a.mean.Correct / n}
	a.heatPeaks[0] /= n
	a.heatPeaks[1] /= n
	return a, nil
}

func argmax(v []float32) int {
	k := 0
	for i, x := range v {
		if x > v[k] {
			k = i
		}
	}
	return k
}

func maxOf(v []float64) float64 {
	m := v[0]
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

// formatTable renders the shown digits' and the mean ink shares.
func formatTable(a analysis) string {
	var b strings.Builder
	b.WriteString("| image | prediction | patches with ink | CLS attention on ink patches | rollout on ink patches |\n")
	b.WriteString("|---|---|---:|---:|---:|\n")
	for i, d := range a.shown {
		s := a.shownInk[i]
		fmt.Fprintf(&b, "| first test %d | %d | %.0f %% | %.0f %% | %.0f %% |\n", d.Label, d.Pred, 100*s.InkFrac, 100*s.CLS, 100*s.Roll)
	}
	fmt.Fprintf(&b, "| **mean of the first %d test images** | %.1f %% correct | %.1f %% | %.1f %% | %.1f %% |\n",
		a.n, 100*a.mean.Correct, 100*a.mean.InkFrac, 100*a.mean.CLS, 100*a.mean.Roll)
	return b.String()
}
