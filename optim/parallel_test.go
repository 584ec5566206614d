package optim

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// coreParams returns parameters of mixed sizes (several spanning many
// chunkElems pieces with a ragged tail, and small 1-D ones), more than
// serialElems values in all so the passes really split over the cores.
func coreParams() []Param {
	shapes := [][]int{{300, 257}, {384}, {100003}, {1}, {3 * chunkElems}, {64, 7}}
	names := []string{"blocks.0.attn.qkv.weight", "blocks.0.norm1.bias", "blocks.1.mlp.fc1.weight", "cls_token", "head.weight", "blocks.1.attn.proj.weight"}
	layerIDs := []int{1, 1, 2, 0, 3, 2} // a depth-2 ViT's
	rng := rand.New(rand.NewPCG(1, 2))
	ps := make([]Param, len(shapes))
	for i, s := range shapes {
		n := 1
		for _, d := range s {
			n *= d
		}
		p := Param{Name: names[i], Shape: s, Value: make([]float32, n), Grad: make([]float32, n), LayerID: layerIDs[i], NoDecay: names[i] == "cls_token"}
		for j := range p.Value {
			p.Value[j] = float32(rng.NormFloat64() * 0.02)
			p.Grad[j] = float32(rng.NormFloat64() * 0.1)
		}
		ps[i] = p
	}
	return ps
}

// optimizerRun runs three steps of clip → finite check → AdamW (with layer
// decay) → EMA at the given core count and returns every number they made.
func optimizerRun(t *testing.T, procs int) (norms []float64, out [][]float32) {
	t.Helper()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	ps := coreParams()
	c := DefaultConfig()
	c.LayerDecay = 0.75
	opt, err := NewAdamW(c)
	if err != nil {
		t.Fatal(err)
	}
	ema, err := NewEMA(0.9, false, ps)
	if err != nil {
		t.Fatal(err)
	}
	for step := 0; step < 3; step++ {
		for _, p := range ps { // a new gradient each step, the same at every core count
			for j := range p.Grad {
				p.Grad[j] = p.Grad[j]*0.5 + p.Value[j]
			}
		}
		norms = append(norms, ClipGradNorm(ps, 1))
		if name, ok := GradsFinite(ps); !ok {
			t.Fatalf("gradient %s non-finite", name)
		}
		if err := opt.Step(ps, 1e-3); err != nil {
			t.Fatal(err)
		}
		if err := ema.Update(ps, step+1); err != nil {
			t.Fatal(err)
		}
	}
	_, m, v := opt.State()
	w := ema.Weights()
	for _, p := range ps {
		out = append(out, p.Value, p.Grad, m[p.Name], v[p.Name], w[p.Name])
	}
	return norms, out
}

// TestOptimizerBitIdenticalAcrossCores: clipping (norm and scaling), the
// finite checks, AdamW and the EMA run over fixed pieces on every core, and
// give the same bits at 1, 2 and 8 cores.
func TestOptimizerBitIdenticalAcrossCores(t *testing.T) {
	norms1, out1 := optimizerRun(t, 1)
	if norms1[0] <= 1 {
		t.Fatalf("norm %v: the test wants clipping to scale", norms1[0])
	}
	for _, procs := range []int{2, 8} {
		norms, out := optimizerRun(t, procs)
		for i := range norms {
			if math.Float64bits(norms[i]) != math.Float64bits(norms1[i]) {
				t.Errorf("%d cores: step %d norm %v, 1 core %v", procs, i, norms[i], norms1[i])
			}
		}
		for i := range out {
			for j := range out[i] {
				if math.Float32bits(out[i][j]) != math.Float32bits(out1[i][j]) {
					t.Errorf("%d cores: tensor %d (param %d) element %d is %v, 1 core %v", procs, i%5, i/5, j, out[i][j], out1[i][j])
					break
				}
			}
		}
	}
}

// TestClipNormIsTheSerialSum: the parallel norm is the serial loop's
// float64 sum bit for bit (each parameter's sum of squares whole, added in
// parameter order).
func TestClipNormIsTheSerialSum(t *testing.T) {
	ps := coreParams()
	var want float64
	for _, p := range ps {
		want += sumSquares(p.Grad)
	}
	want = math.Sqrt(want)
	for _, procs := range []int{1, 2, 8} {
		prev := runtime.GOMAXPROCS(procs)
		got := ClipGradNorm(ps, 0)
		runtime.GOMAXPROCS(prev)
		if math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("%d cores: norm %v, serial %v", procs, got, want)
		}
	}
}

// TestFiniteChecksNameTheFirst: with non-finite values in pieces of two
// parameters, the checks name the first parameter at every core count.
func TestFiniteChecksNameTheFirst(t *testing.T) {
	ps := coreParams()
	ps[4].Grad[2*chunkElems+5] = float32(math.Inf(-1))
	ps[2].Grad[100002] = float32(math.NaN())
	ps[5].Value[3] = float32(math.Inf(1))
	for _, procs := range []int{1, 2, 8} {
		prev := runtime.GOMAXPROCS(procs)
		gname, gok := GradsFinite(ps)
		vname, vok := ValuesFinite(ps)
		runtime.GOMAXPROCS(prev)
		if gok || gname != ps[2].Name {
			t.Errorf("%d cores: GradsFinite = %q, %v; want %q", procs, gname, gok, ps[2].Name)
		}
		if vok || vname != ps[5].Name {
			t.Errorf("%d cores: ValuesFinite = %q, %v; want %q", procs, vname, vok, ps[5].Name)
		}
	}
	if name, ok := ValuesFinite(coreParams()); !ok {
		t.Errorf("finite values reported non-finite at %q", name)
	}
}
