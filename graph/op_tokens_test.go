package graph

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// TestTokensSplitIsExact runs the Tokens forward, its three gradients and
// the Patchify gather at a ViT-S/16-like size on 1, 2 and 8 cores and
// checks each bit for bit against a plain serial loop: the ops split over
// samples or elements, and every element is computed in the same order.
func TestTokensSplitIsExact(t *testing.T) {
	const b, n, d = 5, 196, 64
	tk := t
	r := rand.New(rand.NewPCG(3, 5))
	rnd := func(k int) []float32 {
		s := make([]float32, k)
		for i := range s {
			s[i] = float32(r.NormFloat64())
		}
		return s
	}
	patches, cls, pos, dy := rnd(b*n*d), rnd(d), rnd((n+1)*d), rnd(b*(n+1)*d)
	idx := make([]int32, b*n*d)
	for i := range idx {
		idx[i] = int32(r.IntN(len(patches)))
	}

	// The serial reference.
	wantY := make([]float32, b*(n+1)*d)
	wantDP, wantDC, wantDPos := make([]float32, b*n*d), make([]float32, d), make([]float32, (n+1)*d)
	wantG := make([]float32, len(idx))
	for s := 0; s < b; s++ {
		for j := 0; j < d; j++ {
			wantY[s*(n+1)*d+j] = cls[j] + pos[j]
			wantDC[j] += dy[s*(n+1)*d+j]
		}
		for i := 0; i < n*d; i++ {
			wantY[s*(n+1)*d+d+i] = patches[s*n*d+i] + pos[d+i]
			wantDP[s*n*d+i] = dy[s*(n+1)*d+d+i]
		}
		for i := 0; i < (n+1)*d; i++ {
			wantDPos[i] += dy[s*(n+1)*d+i]
		}
	}
	for i, j := range idx {
		wantG[i] = patches[j]
	}

	fwd := &tokensOp{batch: b, n: n, dim: d, prefix: 1}
	same := func(name string, procs int, got, want []float32) {
		tk.Helper()
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				tk.Fatalf("%s on %d cores: [%d] = %g, want %g bit for bit", name, procs, i, got[i], want[i])
			}
		}
	}
	for _, procs := range []int{1, 2, 8} {
		prev := runtime.GOMAXPROCS(procs)
		y := make([]float32, len(wantY))
		tokensForward(fwd, y, patches, pos, [][]float32{cls})
		same("Tokens", procs, y, wantY)
		for part, want := range [][]float32{wantDP, wantDPos, wantDC} { // the op's input order: patches, pos, cls
			got := make([]float32, len(want))
			for i := range got {
				got[i] = float32(math.NaN()) // the op must overwrite its buffer
			}
			tokensBackward(&tokensGradOp{fwd: fwd, part: part}, got, dy)
			same("TokensGrad", procs, got, want)
		}
		g := make([]float32, len(idx))
		gather(g, patches, idx)
		same("Patchify gather", procs, g, wantG)
		runtime.GOMAXPROCS(prev)
	}
}
