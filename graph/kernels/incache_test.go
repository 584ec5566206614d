package kernels

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
)

func TestInCache(t *testing.T) {
	if os.Getenv("KERNELS_REPORT") == "" {
		t.Skip()
	}
	r := rand.New(rand.NewPCG(2, 2))
	n := 8192
	x, y, dy := randSlice(r, n), make([]float32, n), randSlice(r, n)
	for _, e := range []struct {
		name string
		f    func()
	}{
		{"exp", func() { expVec(y, x) }},
		{"gelu", func() { geluVec(y, x) }},
		{"gelub", func() { geluBackwardVec(y, x, dy) }},
	} {
		d := bestOf(200, e.f)
		fmt.Printf("%s in-cache %.3f ns/elem\n", e.name, float64(d.Nanoseconds())/float64(n))
	}
}
