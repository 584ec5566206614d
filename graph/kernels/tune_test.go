//go:build amd64 && !purego

package kernels

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
)

func TestTuneGemm(t *testing.T) {
	if os.Getenv("KERNELS_TUNE") == "" {
		t.Skip()
	}
	r := rand.New(rand.NewPCG(1, 1))
	type variant struct {
		name       string
		kc, mc, nc int
		packB      bool
	}
	vs := []variant{
		{"base", 256, 448, 2048, false},
		{"packB", 256, 448, 2048, true},
		{"kc384", 384, 448, 2048, false},
		{"kc512", 512, 448, 2048, false},
		{"kc768", 768, 448, 2048, false},
		{"kc512mc224", 512, 224, 2048, false},
	}
	for _, s := range vitGemmShapes {
		a := randSlice(r, s.m*s.k)
		bb := randSlice(r, s.k*s.n)
		c := make([]float32, s.m*s.n)
		lda, ldb := s.k, s.n
		if s.tA {
			lda = s.m
		}
		if s.tB {
			ldb = s.k
		}
		flop := 2 * float64(s.m*s.n*s.k)
		best := make([]float64, len(vs))
		for rep := 0; rep < 10; rep++ {
			for i, v := range vs {
				kcBlock, mcBlock, ncBlock, packAllB = v.kc, v.mc, v.nc, v.packB
				d := bestOf(2, func() {
					sgemmNative(kernelAVX512, s.tA, s.tB, s.m, s.n, s.k, 1, a, lda, bb, ldb, 0, c, s.n, false)
				})
				best[i] = max(best[i], flop/d.Seconds()/1e9)
			}
		}
		line := fmt.Sprintf("%-18s", s.name)
		for i, v := range vs {
			line += fmt.Sprintf(" %s %6.1f", v.name, best[i])
		}
		fmt.Println(line)
	}
	kcBlock, mcBlock, ncBlock, packAllB = 256, 448, 2048, false
}
