package kernels

import (
	"math/rand/v2"
	"runtime"
	"testing"
)

// TestInt8ThenRuns: Int8LinearThen hands its epilogue each finished row
// block as one run of adjacent panels per chunk, not one call per 16
// columns (at one core: one call per block of int8RowBlock rows), covers
// every element exactly once at any core count, and the fused result is
// the unfused one bit for bit.
func TestInt8ThenRuns(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, sh := range [][3]int{{197, 768, 192}, {197, 192, 192}, {70, 40, 33}, {1, 50, 20}} {
		m, n, k := sh[0], sh[1], sh[2]
		x, w := randFloats(r, m*k, 1), randFloats(r, n*k, 0.05)
		res := randFloats(r, m*n, 1)
		p := QuantizeInt8(w, n, k, k)
		want := make([]float32, m*n)
		Int8Linear(want, n, x, k, m, p, nil)
		for i := range want {
			want[i] += res[i] // what EpilogueRow's residual sum computes, alone
		}
		for _, procs := range []int{1, 2, 3} {
			prev := runtime.GOMAXPROCS(procs)
			y := make([]float32, m*n)
			seen := make([]int, m*n)
			calls := 0
			ch := make(chan int, 1)
			ch <- 0
			Int8LinearThen(y, n, x, k, m, p, nil, func(i0, i1, j0, j1 int) {
				calls = <-ch + 1
				ch <- calls
				for i := i0; i < i1; i++ {
					EpilogueRow(y[i*n+j0:i*n+j1], nil, res[i*n+j0:i*n+j1], false)
					for j := j0; j < j1; j++ {
						seen[i*n+j]++
					}
				}
			})
			runtime.GOMAXPROCS(prev)
			for i, v := range seen {
				if v != 1 {
					t.Fatalf("%v at %d cores: element %d finished %d times", sh, procs, i, v)
				}
				if y[i] != want[i] {
					t.Fatalf("%v at %d cores: y[%d] = %v, unfused %v", sh, procs, i, y[i], want[i])
				}
			}
			if blocks := (m + int8RowBlock - 1) / int8RowBlock; procs == 1 && calls != blocks {
				t.Errorf("%v at one core: %d calls of the epilogue, want one per row block (%d)", sh, calls, blocks)
			}
		}
	}
}
