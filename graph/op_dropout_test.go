package graph

import (
	"fmt"
	"math"
	"runtime"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// dropNode builds Dropout (batch == 0) or DropPath on x.
func dropNode(x *G.Node, p float64, batch int, s *Stochastic, stream uint64) (*G.Node, error) {
	if batch == 0 {
		return Dropout(x, p, s, stream)
	}
	return DropPath(x, p, batch, s, stream)
}

func TestDropGradCheck(t *testing.T) {
	for _, tc := range []struct {
		name     string
		batch    int // 0: Dropout
		p        float64
		training bool
	}{
		{"dropout-train", 0, 0.4, true},
		{"dropout-p0", 0, 0, true},
		{"dropout-eval", 0, 0.5, false},
		{"droppath-train", 6, 0.5, true},
		{"droppath-p0", 6, 0, true},
		{"droppath-eval", 6, 0.5, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := G.NewGraph()
			x := randNode(g, tensor.Float64, "x", 1, 101, 12, 3)
			s := &Stochastic{Training: tc.training, Seed: 5, Step: 17}
			y, err := dropNode(x, tc.p, tc.batch, s, StreamID("blocks.0.drop"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := GradCheck(weightedSum(t, y, 102), G.Nodes{x}, GradCheckOptions{}); err != nil {
				t.Fatal(err)
			}
			op := y.Op().(*dropOp)
			if want := tc.training && tc.p > 0; op.active != want {
				t.Fatalf("mask applied = %v, want %v", op.active, want)
			}
			if op.active {
				var kept int
				for _, k := range op.keep {
					if k {
						kept++
					}
				}
				if kept == 0 || kept == len(op.keep) {
					t.Fatalf("mask keeps %d of %d: the check exercises only one branch", kept, len(op.keep))
				}
			}
		})
	}
}

// TestDropIdentity: in evaluation or at p = 0 the output is x and the
// gradient is dy, bit for bit (Gorgonia's Dropout zeroes it at p = 0).
func TestDropIdentity(t *testing.T) {
	for _, tc := range []struct {
		batch    int
		p        float64
		training bool
	}{{0, 0, true}, {0, 0.3, false}, {2, 0, true}, {2, 0.3, false}} {
		for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
			g := G.NewGraph()
			x := randNode(g, dt, "x", 1, 111, 4, 5)
			y, err := dropNode(x, tc.p, tc.batch, &Stochastic{Training: tc.training, Seed: 1}, 9)
			if err != nil {
				t.Fatal(err)
			}
			r := randNode(g, dt, "R", 1, 112, 4, 5)
			if _, err := G.Grad(G.Must(G.Sum(G.Must(G.HadamardProd(y, r)))), x); err != nil {
				t.Fatal(err)
			}
			runOnce(t, g)
			gv, err := x.Grad()
			if err != nil {
				t.Fatal(err)
			}
			xs, ys, rs, dxs := valueF64s(t, x.Value()), valueF64s(t, y.Value()), valueF64s(t, r.Value()), valueF64s(t, gv)
			for i := range xs {
				if ys[i] != xs[i] || dxs[i] != rs[i] {
					t.Fatalf("%+v %v: y[%d] = %v (x %v), dx = %v (dy %v)", tc, dt, i, ys[i], xs[i], dxs[i], rs[i])
				}
			}
		}
	}
}

// dropRun builds x = ones(rows, d), applies Dropout/DropPath in training mode
// at step and returns y and dx for dy = R.
func dropRun(t *testing.T, dt tensor.Dtype, rows, d, batch int, p float64, seed, step, stream uint64) (y, dx, dy []float64) {
	t.Helper()
	g := G.NewGraph()
	ones := make([]float64, rows*d)
	for i := range ones {
		ones[i] = 1
	}
	x := constNode(g, dt, "x", ones, rows, d)
	out, err := dropNode(x, p, batch, &Stochastic{Training: true, Seed: seed, Step: step}, stream)
	if err != nil {
		t.Fatal(err)
	}
	r := randNode(g, dt, "R", 1, 7, rows, d)
	if _, err := G.Grad(G.Must(G.Sum(G.Must(G.HadamardProd(out, r)))), x); err != nil {
		t.Fatal(err)
	}
	runOnce(t, g)
	gv, err := x.Grad()
	if err != nil {
		t.Fatal(err)
	}
	return valueF64s(t, out.Value()), valueF64s(t, gv), valueF64s(t, r.Value())
}

func TestDropoutMask(t *testing.T) {
	const rows, d, p = 200, 100, 0.25
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		scale := 1 / (1 - p)
		if dt == tensor.Float32 {
			scale = float64(float32(scale))
		}
		y, dx, dy := dropRun(t, dt, rows, d, 0, p, 3, 4, 5)
		var dropped int
		for i, v := range y {
			switch v {
			case 0:
				dropped++
				if dx[i] != 0 {
					t.Fatalf("%v: dropped element %d has gradient %v", dt, i, dx[i])
				}
			case scale:
				if want := valueF64s(t, scaled(dt, dy[i], scale)); dx[i] != want[0] {
					t.Fatalf("%v: kept element %d: dx %v, want dy/keep %v", dt, i, dx[i], want[0])
				}
			default:
				t.Fatalf("%v: y[%d] = %v, want 0 or %v", dt, i, v, scale)
			}
		}
		// 20000 Bernoulli(0.25) draws: σ ≈ 0.003.
		if f := float64(dropped) / float64(len(y)); math.Abs(f-p) > 0.015 {
			t.Errorf("%v: dropped fraction %v, want ≈ %v", dt, f, p)
		}
	}
}

// scaled returns v·s rounded as dtype dt would.
func scaled(dt tensor.Dtype, v, s float64) G.Value {
	if dt == tensor.Float32 {
		return G.NewF32(float32(v) * float32(s))
	}
	return G.NewF64(v * s)
}

func TestDropPathMask(t *testing.T) {
	const batch, tokens, d, p = 2000, 3, 2, 0.3
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		scale := 1 / (1 - p)
		if dt == tensor.Float32 {
			scale = float64(float32(scale))
		}
		y, dx, dy := dropRun(t, dt, batch*tokens, d, batch, p, 11, 12, StreamID("blocks.3.drop_path1"))
		per := tokens * d
		var dropped int
		for b := 0; b < batch; b++ {
			ys, dxs := y[b*per:(b+1)*per], dx[b*per:(b+1)*per]
			kept := ys[0] != 0
			if !kept {
				dropped++
			}
			for i, v := range ys {
				j := b*per + i
				if !kept && (v != 0 || dxs[i] != 0) {
					t.Fatalf("%v: sample %d dropped but y[%d] = %v, dx = %v", dt, b, j, v, dxs[i])
				}
				if kept && (v != scale || dxs[i] != valueF64s(t, scaled(dt, dy[j], scale))[0]) {
					t.Fatalf("%v: sample %d kept but y[%d] = %v (want %v), dx = %v (dy %v)", dt, b, j, v, scale, dxs[i], dy[j])
				}
			}
		}
		// 2000 Bernoulli(0.3) draws: σ ≈ 0.01.
		if f := float64(dropped) / batch; math.Abs(f-p) > 0.04 {
			t.Errorf("%v: dropped fraction %v, want ≈ %v", dt, f, p)
		}
	}
}

// TestDropDeterminism: a mask is a function of (seed, step, stream) only, so
// a graph rebuilt elsewhere reproduces it; any change of the three changes it.
func TestDropDeterminism(t *testing.T) {
	for _, batch := range []int{0, 64} {
		rows := 64
		mask := func(seed, step, stream uint64) string {
			y, _, _ := dropRun(t, tensor.Float32, rows, 4, batch, 0.5, seed, step, stream)
			b := make([]byte, len(y))
			for i, v := range y {
				b[i] = '0'
				if v != 0 {
					b[i] = '1'
				}
			}
			return string(b)
		}
		base := mask(1, 100, 7)
		if again := mask(1, 100, 7); again != base {
			t.Errorf("batch %d: same (seed, step, stream) gave two masks", batch)
		}
		for name, m := range map[string]string{
			"step":   mask(1, 101, 7),
			"stream": mask(1, 100, 8),
			"seed":   mask(2, 100, 7),
		} {
			if m == base {
				t.Errorf("batch %d: a different %s gave the same mask", batch, name)
			}
		}
	}
}

// TestDropStepOnOneMachine reruns one machine with s.Step advanced, as the
// training loop does, and checks each step's mask equals a fresh graph's.
func TestDropStepOnOneMachine(t *testing.T) {
	const rows, d, batch = 16, 4, 16
	g := G.NewGraph()
	ones := make([]float64, rows*d)
	for i := range ones {
		ones[i] = 1
	}
	x := constNode(g, tensor.Float64, "x", ones, rows, d)
	s := &Stochastic{Training: true, Seed: 9}
	y, err := DropPath(x, 0.5, batch, s, 3)
	if err != nil {
		t.Fatal(err)
	}
	m := G.NewTapeMachine(g)
	defer m.Close()
	seen := map[string]bool{}
	for step := uint64(0); step < 4; step++ {
		s.Step = step
		if err := m.RunAll(); err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprint(valueF64s(t, y.Value()))
		m.Reset()
		want, _, _ := dropRun(t, tensor.Float64, rows, d, batch, 0.5, 9, step, 3)
		if got != fmt.Sprint(want) {
			t.Errorf("step %d: rerun gives %s, a fresh graph %v", step, got, want)
		}
		seen[got] = true
	}
	if len(seen) < 2 {
		t.Error("four steps all drew the same mask")
	}
}

func TestStreamID(t *testing.T) {
	// FNV-1a 64 of the path, computed independently in Python.
	if got := StreamID("blocks.3.drop_path1"); got != 6621250669819481422 {
		t.Errorf("StreamID = %d", got)
	}
	if StreamID("blocks.3.drop_path1") == StreamID("blocks.3.drop_path2") {
		t.Error("two paths share a stream")
	}
}

func TestDropErrors(t *testing.T) {
	g := G.NewGraph()
	x := randNode(g, tensor.Float32, "x", 1, 1, 6, 4)
	s := &Stochastic{Training: true}
	for _, tc := range []struct {
		name  string
		p     float64
		batch int
		s     *Stochastic
	}{
		{"p=1", 1, 0, s},
		{"p<0", -0.1, 0, s},
		{"p NaN", math.NaN(), 0, s},
		{"nil Stochastic", 0.1, 0, nil},
		{"droppath p=1", 1, 2, s},
		{"droppath batch 4 of 6 rows", 0.1, 4, s},
		{"droppath batch -1", 0.1, -1, s},
	} {
		var err error
		if tc.batch == 0 {
			_, err = Dropout(x, tc.p, tc.s, 1)
		} else {
			_, err = DropPath(x, tc.p, tc.batch, tc.s, 1)
		}
		if err == nil {
			t.Errorf("%s: want an error", tc.name)
		}
	}
}

// ExampleDropPath shows the per-sample mask changing with the step and the
// identity in evaluation.
func ExampleDropPath() {
	g := G.NewGraph()
	// Four samples of two token rows each, all ones.
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(8, 2), G.WithName("x"), G.WithInit(G.Ones()))
	s := &Stochastic{Training: true, Seed: 42}
	y, err := DropPath(x, 0.5, 4, s, StreamID("blocks.0.drop_path1"))
	if err != nil {
		fmt.Println(err)
		return
	}
	m := G.NewTapeMachine(g)
	defer m.Close()
	for _, run := range []struct {
		train bool
		step  uint64
	}{{true, 0}, {true, 1}, {false, 1}} {
		s.Training, s.Step = run.train, run.step
		if err := m.RunAll(); err != nil {
			fmt.Println(err)
			return
		}
		v := y.Value().Data().([]float64)
		fmt.Printf("training %v step %d: samples scaled by %v\n", run.train, run.step, []float64{v[0], v[4], v[8], v[12]})
		m.Reset()
	}
	// Output:
	// training true step 0: samples scaled by [0 2 0 0]
	// training true step 1: samples scaled by [0 2 2 0]
	// training false step 1: samples scaled by [1 1 1 1]
}

// TestDropRowsMatchWholeBatch: a graph over some samples of a batch, with
// Stochastic.Rows naming their positions, draws the whole batch's masks for
// them (a data-parallel rank's slice, or a micro-batch).
func TestDropRowsMatchWholeBatch(t *testing.T) {
	const batch, tokens, d = 8, 3, 4
	rows := []int{1, 2, 5, 6}
	for _, drop := range []int{0, 1} { // 0: Dropout, 1: DropPath
		run := func(n int, pos []int) []float64 {
			g := G.NewGraph()
			ones := make([]float64, n*tokens*d)
			for i := range ones {
				ones[i] = 1
			}
			x := constNode(g, tensor.Float64, "x", ones, n*tokens, d)
			s := &Stochastic{Training: true, Seed: 3, Step: 11, Rows: pos}
			y, err := dropNode(x, 0.5, drop*n, s, 5)
			if err != nil {
				t.Fatal(err)
			}
			runOnce(t, g)
			return valueF64s(t, y.Value())
		}
		whole := run(batch, nil)
		part := run(len(rows), rows)
		per := tokens * d
		for i, p := range rows {
			if fmt.Sprint(part[i*per:(i+1)*per]) != fmt.Sprint(whole[p*per:(p+1)*per]) {
				t.Errorf("drop path %d: sample %d (position %d) has mask %v, the whole batch %v", drop, i, p, part[i*per:(i+1)*per], whole[p*per:(p+1)*per])
			}
		}
	}
}

// TestDropSplitIsExact runs Dropout and DropPath at sizes that split the
// mask draws and the masking over the cores, on 1, 2 and 8 cores: outputs
// and gradients must be equal bit for bit (each draw is a function of its
// position, each element is masked on its own).
func TestDropSplitIsExact(t *testing.T) {
	for _, tc := range []struct {
		name         string
		rows, d, bat int
	}{{"dropout", 400, 100, 0}, {"drop-path", 500 * 50, 4, 500}} {
		var wantY, wantDx []float64
		for _, procs := range []int{1, 2, 8} {
			prev := runtime.GOMAXPROCS(procs)
			y, dx, _ := dropRun(t, tensor.Float32, tc.rows, tc.d, tc.bat, 0.3, 5, 6, 7)
			runtime.GOMAXPROCS(prev)
			if wantY == nil {
				wantY, wantDx = y, dx
				continue
			}
			for i := range y {
				if y[i] != wantY[i] || dx[i] != wantDx[i] {
					t.Fatalf("%s on %d cores: y[%d], dx[%d] = %v, %v; on 1 core %v, %v", tc.name, procs, i, i, y[i], dx[i], wantY[i], wantDx[i])
				}
			}
		}
	}
}
