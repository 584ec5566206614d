package train

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/checkpoint"
	"github.com/vitgo/vit/checkpoint/safetensors"
	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/layers"
)

// TestMatchesPyTorch loads a state_dict written by PyTorch (the bench
// peer's timm-layout ViT, experiments/goldens/vit_golden.py) through our
// checkpoint loader and requires the same logits, loss and parameter
// gradients: the model, its parameter names and layouts, and autodiff all
// agree with PyTorch.
func TestMatchesPyTorch(t *testing.T) {
	raw, err := os.ReadFile("testdata/vit_torch.json")
	if err != nil {
		t.Fatal(err)
	}
	var gold struct {
		Input, Targets, Logits []float64
		Loss                   float64
		Grads                  map[string][]float64
	}
	if err := json.Unmarshal(raw, &gold); err != nil {
		t.Fatal(err)
	}
	f, err := safetensors.ReadFile("testdata/vit_torch.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	c := layers.DefaultConfig()
	c.ImgSize, c.PatchSize, c.InChans, c.NumClasses = layers.Size2{8, 8}, 4, 2, 3
	c.EmbedDim, c.Depth, c.NumHeads, c.MLPRatio = 8, 2, 2, 2
	for _, tc := range []struct {
		dt        tensor.Dtype
		tol, gtol float64
	}{{tensor.Float64, 1e-10, 1e-9}, {tensor.Float32, 2e-5, 1e-4}} {
		m, err := layers.New(c, tc.dt, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := checkpoint.LoadWeights(m, f, checkpoint.LoadOptions{}); err != nil {
			t.Fatal(err)
		}
		gr, err := m.Build(2, layers.BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		setFloats(gr.Input.Value().(*tensor.Dense), gold.Input)
		tgt := tensor.New(tensor.Of(tc.dt), tensor.WithShape(2, 3))
		setFloats(tgt, gold.Targets)
		targets := G.NewTensor(gr.G, tc.dt, 2, G.WithValue(tgt), G.WithName("targets"))
		loss, err := graph.SoftmaxCrossEntropy(gr.Logits, targets)
		if err != nil {
			t.Fatal(err)
		}
		grads, err := G.Grad(loss, gr.Params...)
		if err != nil {
			t.Fatal(err)
		}
		vm := G.NewTapeMachine(gr.G)
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		if d := maxAbsDiff(floats(gr.Logits.Value()), gold.Logits); d > tc.tol {
			t.Errorf("%v: logits differ from PyTorch by %g", tc.dt, d)
		}
		if d := math.Abs(floats(loss.Value())[0] - gold.Loss); d > tc.tol {
			t.Errorf("%v: loss differs from PyTorch by %g", tc.dt, d)
		}
		for i, p := range m.Params {
			want, ok := gold.Grads[p.Name]
			if !ok {
				t.Fatalf("no PyTorch gradient for %s", p.Name)
			}
			if d := maxAbsDiff(floats(grads[i].Value()), want); d > tc.gtol {
				t.Errorf("%v: gradient of %s differs from PyTorch by %g", tc.dt, p.Name, d)
			}
		}
		vm.Close()
	}
}

func setFloats(t *tensor.Dense, v []float64) {
	switch d := t.Data().(type) {
	case []float32:
		for i := range d {
			d[i] = float32(v[i])
		}
	case []float64:
		copy(d, v)
	}
}

func floats(v G.Value) []float64 {
	switch d := v.Data().(type) {
	case []float32:
		out := make([]float64, len(d))
		for i, x := range d {
			out[i] = float64(x)
		}
		return out
	case []float64:
		return d
	case float32:
		return []float64{float64(d)}
	case float64:
		return []float64{d}
	}
	return nil
}

func maxAbsDiff(a, b []float64) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	m := 0.0
	for i := range a {
		m = math.Max(m, math.Abs(a[i]-b[i]))
	}
	return m
}
