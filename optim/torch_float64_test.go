package optim

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/vitgo/vit/internal/optional"
)

// torchGoldens is testdata/{sgd,lamb}_torch.json, written by
// testdata/make_goldens.py: torch's SGD and timm's Lamb over 20 float64
// steps of three tensors, each in a group of its own.
type torchGoldens struct {
	WeightDecay float64   `json:"weight_decay"`
	LayerDecay  float64   `json:"layer_decay"`
	LRs         []float64 `json:"lrs"`
	Tensors     []struct {
		Name    string      `json:"name"`
		Shape   []int       `json:"shape"`
		LayerID int         `json:"layer_id"`
		NoDecay bool        `json:"no_decay"`
		W0      []float64   `json:"w0"`
		Grads   [][]float64 `json:"grads"`
	} `json:"tensors"`
	Runs map[string]struct {
		Steps [][][]float64 `json:"steps"` // step → tensor → weights after it
	} `json:"runs"`
}

func readTorchGoldens(t *testing.T, file string) torchGoldens {
	t.Helper()
	b, err := os.ReadFile("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	var g torchGoldens
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return g
}

// params returns the goldens' tensors as float32 Params (weights w0,
// gradients of step 0).
func (g torchGoldens) params() []Param {
	ps := make([]Param, len(g.Tensors))
	for i, tt := range g.Tensors {
		ps[i] = Param{Name: tt.Name, Shape: tt.Shape, LayerID: tt.LayerID, NoDecay: tt.NoDecay,
			Value: to32(tt.W0), Grad: make([]float32, len(tt.W0))}
	}
	return ps
}

func to32(x []float64) []float32 {
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = float32(v)
	}
	return out
}

// goldenCases are the optimizers checked against the goldens: the run's
// key, its file and config.
var goldenCases = []struct {
	run, file string
	opt       OptName
	momentum  optional.Float
}{
	{"sgd", "sgd_torch.json", OptSGD, optional.Float{}},
	{"sgd", "sgd_torch.json", OptNesterov, optional.FloatOf(0.9)},
	{"momentum", "sgd_torch.json", OptMomentum, optional.Float{}},
	{"momentum_0.5", "sgd_torch.json", OptMomentum, optional.FloatOf(0.5)},
	{"momentum_0", "sgd_torch.json", OptMomentum, optional.FloatOf(0)},
	{"lamb", "lamb_torch.json", OptLamb, optional.Float{}},
}

func goldenConfig(g torchGoldens, opt OptName, momentum optional.Float) Config {
	c := Config{Opt: opt, Momentum: momentum, LayerDecay: g.LayerDecay}
	c.WeightDecay.Set(g.WeightDecay)
	return c
}

// TestAgainstTorchFloat64 runs each optimizer's arithmetic (sgdStep,
// lambStep) in float64 for 20 steps with weight decay, a no-decay tensor
// and layer decay, and compares every weight with torch's (timm's for
// Lamb) within 1e-12. The groups come from the optimizer built by New.
func TestAgainstTorchFloat64(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(string(tc.opt)+"/"+tc.run, func(t *testing.T) {
			g := readTorchGoldens(t, tc.file)
			opt, err := New(goldenConfig(g, tc.opt, tc.momentum))
			if err != nil {
				t.Fatal(err)
			}
			params := g.params()
			ts := make([]tensorRef[float64], len(params))
			for i, tt := range g.Tensors {
				ts[i] = tensorRef[float64]{w: append([]float64(nil), tt.W0...), group: groupOf(params[i], numLayers(params), g.WeightDecay, g.LayerDecay)}
				for range opt.Slots() {
					ts[i].bufs = append(ts[i].bufs, make([]float64, len(tt.W0)))
				}
			}
			want := g.Runs[tc.run].Steps
			if len(want) != 20 {
				t.Fatalf("run %s: %d steps, want 20", tc.run, len(want))
			}
			for s := range want {
				for i := range ts {
					ts[i].g = g.Tensors[i].Grads[s]
				}
				switch o := opt.(type) {
				case *SGD:
					sgdStep(ts, g.LRs[s], o.momentum, o.nesterov, s == 0)
				case *Lamb:
					lambStep(ts, g.LRs[s], s+1, o.beta1, o.beta2, o.eps)
				default:
					t.Fatalf("%T", opt)
				}
				for i := range ts {
					for j, w := range ts[i].w {
						if d := math.Abs(w - want[s][i][j]); !(d <= 1e-12) {
							t.Fatalf("step %d %s[%d]: got %.17g, torch %.17g (diff %g)", s+1, g.Tensors[i].Name, j, w, want[s][i][j], d)
						}
					}
				}
			}
		})
	}
}

// TestAgainstTorchFloat32 runs each optimizer's Step, as training does, on
// float32 copies of the goldens' tensors: the groups, the slots and the step
// count come from the optimizer itself. Halfway it saves its state and a
// fresh optimizer restores it, which must continue bit for bit.
func TestAgainstTorchFloat32(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(string(tc.opt)+"/"+tc.run, func(t *testing.T) {
			g := readTorchGoldens(t, tc.file)
			c := goldenConfig(g, tc.opt, tc.momentum)
			a, err := New(c)
			if err != nil {
				t.Fatal(err)
			}
			pa, pb := g.params(), g.params()
			var b Optimizer
			want := g.Runs[tc.run].Steps
			for s := range want {
				for i := range pa {
					copy(pa[i].Grad, to32(g.Tensors[i].Grads[s]))
					copy(pb[i].Grad, pa[i].Grad)
				}
				if err := a.Step(pa, g.LRs[s]); err != nil {
					t.Fatal(err)
				}
				if b != nil {
					if err := b.Step(pb, g.LRs[s]); err != nil {
						t.Fatal(err)
					}
				}
				for i := range pa {
					for j, w := range pa[i].Value {
						if d := math.Abs(float64(w) - want[s][i][j]); !(d <= 1e-5*(1+math.Abs(want[s][i][j]))) {
							t.Fatalf("step %d %s[%d]: got %.9g, torch %.9g", s+1, pa[i].Name, j, w, want[s][i][j])
						}
						if b != nil && math.Float32bits(pb[i].Value[j]) != math.Float32bits(w) {
							t.Fatalf("step %d %s[%d]: resumed %.9g, uninterrupted %.9g", s+1, pa[i].Name, j, pb[i].Value[j], w)
						}
					}
				}
				if s == 9 {
					if b, err = New(c); err != nil {
						t.Fatal(err)
					}
					if err := b.RestoreState(a.SaveState()); err != nil {
						t.Fatal(err)
					}
					for i := range pb {
						copy(pb[i].Value, pa[i].Value)
					}
				}
			}
			if a.Steps() != 20 || b.Steps() != 20 {
				t.Errorf("Steps() = %d and %d, want 20", a.Steps(), b.Steps())
			}
		})
	}
}
