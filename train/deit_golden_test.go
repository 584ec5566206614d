package train

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/checkpoint"
	"github.com/vitgo/vit/checkpoint/safetensors"
	"github.com/vitgo/vit/internal/optional"
	"github.com/vitgo/vit/layers"
)

// deitGolden is train/testdata/deit_timm.json, written by
// experiments/goldens/deit_golden.py from real timm's
// VisionTransformerDistilled and DeiT's DistillationLoss.
type deitGolden struct {
	Input, Labels, Teacher, Logits, Head []float64
	HeadDist                             []float64 `json:"head_dist"`
	Losses                               map[string]struct {
		Alpha, Tau, Loss float64
		Grads            map[string][]float64
	}
}

func readDeiTGolden(t *testing.T) (deitGolden, *safetensors.File) {
	t.Helper()
	raw, err := os.ReadFile("testdata/deit_timm.json")
	if err != nil {
		t.Fatal(err)
	}
	var gold deitGolden
	if err := json.Unmarshal(raw, &gold); err != nil {
		t.Fatal(err)
	}
	f, err := safetensors.ReadFile("testdata/deit_timm.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	return gold, f
}

// deitGoldenConfig is the golden's model: vit_golden.py's small ViT with
// the distillation token.
func deitGoldenConfig() layers.Config {
	c := layers.DefaultConfig()
	c.ImgSize, c.PatchSize, c.InChans, c.NumClasses = layers.Size2{8, 8}, 4, 2, 3
	c.EmbedDim, c.Depth, c.NumHeads, c.MLPRatio = 8, 2, 2, 2
	c.Distilled = true
	return c
}

// TestDeiTMatchesTimm loads real timm's VisionTransformerDistilled
// state_dict (every key and shape must match ours, both ways) and requires
// its evaluation logits, (head + head_dist)/2, from every kind of graph:
// float64 to 1e-10, float32 (also Frozen and NoMaps) to 1e-4.
func TestDeiTMatchesTimm(t *testing.T) {
	gold, f := readDeiTGolden(t)
	for _, tc := range []struct {
		dt   tensor.Dtype
		opts layers.BuildOptions
		tol  float64
	}{
		{tensor.Float64, layers.BuildOptions{}, 1e-10},
		{tensor.Float32, layers.BuildOptions{}, 1e-4},
		{tensor.Float32, layers.BuildOptions{NoMaps: true}, 1e-4},
		{tensor.Float32, layers.BuildOptions{Frozen: true}, 1e-4},
	} {
		m, err := layers.New(deitGoldenConfig(), tc.dt, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := checkpoint.LoadWeights(m, f, checkpoint.LoadOptions{NoResample: true}); err != nil {
			t.Fatal(err)
		}
		g, err := m.Build(2, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		setFloats(g.Input.Value().(*tensor.Dense), gold.Input)
		vm := G.NewTapeMachine(g.G)
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		if d := maxAbsDiff(floats(g.Logits.Value()), gold.Logits); d > tc.tol {
			t.Errorf("%v %+v: logits differ from timm by %g", tc.dt, tc.opts, d)
		}
		vm.Close()
	}
}

// TestDeiTLossMatchesTimm trains the golden's model one forward and backward
// with DeiT's DistillationLoss (hard, and soft at tau 2) against fixed
// teacher logits: the two heads, the loss and every parameter's gradient
// equal timm + DeiT's in float64.
func TestDeiTLossMatchesTimm(t *testing.T) {
	gold, f := readDeiTGolden(t)
	for _, typ := range []DistillType{DistillHard, DistillSoft} {
		want := gold.Losses[string(typ)]
		m, err := layers.New(deitGoldenConfig(), tensor.Float64, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := checkpoint.LoadWeights(m, f, checkpoint.LoadOptions{NoResample: true}); err != nil {
			t.Fatal(err)
		}
		g, err := m.Build(2, layers.BuildOptions{Training: true, DistilledTraining: true})
		if err != nil {
			t.Fatal(err)
		}
		setFloats(g.Input.Value().(*tensor.Dense), gold.Input)
		tgt := tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(2, 3))
		setFloats(tgt, gold.Labels)
		targets := G.NewTensor(g.G, tensor.Float64, 2, G.WithValue(tgt), G.WithName("targets"))
		loss, kd, err := buildKDLoss(g, targets, DistillConfig{Type: typ, Alpha: optional.FloatOf(want.Alpha), Tau: want.Tau})
		if err != nil {
			t.Fatal(err)
		}
		if err := fillKD(kd, gold.Teacher); err != nil {
			t.Fatal(err)
		}
		grads, err := G.Grad(loss, g.Params...)
		if err != nil {
			t.Fatal(err)
		}
		vm := G.NewTapeMachine(g.G)
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		if d := maxAbsDiff(floats(g.Logits.Value()), gold.Head); d > 1e-10 {
			t.Errorf("%s: head differs from timm by %g", typ, d)
		}
		if d := maxAbsDiff(floats(g.DistLogits.Value()), gold.HeadDist); d > 1e-10 {
			t.Errorf("%s: head_dist differs from timm by %g", typ, d)
		}
		if d := math.Abs(floats(loss.Value())[0] - want.Loss); d > 1e-10 {
			t.Errorf("%s: loss %v, DeiT's %v", typ, floats(loss.Value())[0], want.Loss)
		}
		for i, p := range m.Params {
			if d := maxAbsDiff(floats(grads[i].Value()), want.Grads[p.Name]); d > 1e-9 {
				t.Errorf("%s: gradient of %s differs from DeiT's by %g", typ, p.Name, d)
			}
		}
		vm.Close()
	}
}

// TestWriteDeiTForTimm writes a distilled checkpoint of ours (the golden's
// config, random weights, both heads non-zero) and its evaluation logits on
// the golden input into $DEIT_GOLDEN_DIR, for
// `experiments/goldens/deit_golden.py --check DIR/deit_ours.safetensors`,
// which loads it into timm's VisionTransformerDistilled with strict=True and
// compares the logits; without the variable it does nothing.
func TestWriteDeiTForTimm(t *testing.T) {
	dir := os.Getenv("DEIT_GOLDEN_DIR")
	if dir == "" {
		t.Skip("DEIT_GOLDEN_DIR not set")
	}
	gold, _ := readDeiTGolden(t)
	c := deitGoldenConfig()
	c.ZeroInitHead.Set(false)
	m, err := layers.New(c, tensor.Float32, 21)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "deit_ours.safetensors")
	if err := checkpoint.SaveModel(path, m, checkpoint.ModelMeta{Weights: "raw"}, nil); err != nil {
		t.Fatal(err)
	}
	g, err := m.Build(2, layers.BuildOptions{NoMaps: true})
	if err != nil {
		t.Fatal(err)
	}
	setFloats(g.Input.Value().(*tensor.Dense), gold.Input)
	vm := G.NewTapeMachine(g.G)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(map[string][]float64{"logits": floats(g.Logits.Value())})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".json", b, 0o644); err != nil {
		t.Fatal(err)
	}
}
