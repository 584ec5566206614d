package train

import (
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/optim"
)

// These document Gorgonia v0.9.18 bugs that the training loop routes
// around; each fails if the upstream behaviour changes, so the workaround
// can be revisited. (The op-level ones live in graph/upstream_test.go.)

func TestUpstreamAdamWNeverUpdates(t *testing.T) {
	g := G.NewGraph()
	w := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 2), G.WithName("w"), G.WithInit(G.RangedFrom(1)))
	cost := G.Must(G.Sum(G.Must(G.Square(w))))
	if _, err := G.Grad(cost, w); err != nil {
		t.Fatal(err)
	}
	m := G.NewTapeMachine(g, G.BindDualValues(w))
	defer m.Close()
	before := append([]float64(nil), w.Value().Data().([]float64)...)
	solver := G.NewAdamW(G.WithLearnRate(0.1))
	for i := 0; i < 3; i++ {
		if err := m.RunAll(); err != nil {
			t.Fatal(err)
		}
		if err := solver.Step(G.NodesToValueGrads(G.Nodes{w})); err != nil {
			t.Fatal(err)
		}
		m.Reset()
	}
	after := w.Value().Data().([]float64)
	changed := false
	for i := range before {
		changed = changed || before[i] != after[i]
	}
	if changed {
		t.Fatalf("upstream NewAdamW now updates weights (%v → %v): the bug is fixed upstream", before, after)
	}
	t.Log("upstream bug present: Gorgonia's NewAdamW left the weights unchanged after 3 steps")

	// Ours moves them.
	opt, err := optim.NewAdamW(optim.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	p := []optim.Param{{Name: "w", Shape: []int{2, 2}, Value: []float32{1, 2, 3, 4}, Grad: []float32{2, 4, 6, 8}}}
	if err := opt.Step(p, 0.1); err != nil {
		t.Fatal(err)
	}
	if p[0].Value[0] == 1 {
		t.Fatal("optim.AdamW did not update")
	}
}

func TestUpstreamLispMachineCannotRerun(t *testing.T) {
	g := G.NewGraph()
	x := G.NewScalar(g, tensor.Float64, G.WithName("x"), G.WithValue(3.0))
	y := G.Must(G.Mul(x, x))
	if _, err := G.Grad(y, x); err != nil {
		t.Fatal(err)
	}
	m := G.NewLispMachine(g)
	defer m.Close()
	if err := m.RunAll(); err != nil {
		t.Fatal(err)
	}
	m.Reset()
	if err := G.Let(x, 5.0); err != nil {
		t.Fatal(err)
	}
	err := m.RunAll()
	gx, _ := x.Grad()
	if err == nil && y.Value().Data().(float64) == 25 && gx != nil && gx.Data().(float64) == 10 {
		t.Fatal("upstream LispMachine reran correctly after Reset: the bug is fixed upstream")
	}
	t.Logf("upstream bug present: LispMachine rerun after Reset gives y=%v dy/dx=%v err=%v, want 25 and 10 (we use the TapeMachine)", y.Value(), gx, err)
}
