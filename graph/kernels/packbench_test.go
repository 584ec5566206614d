package kernels

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
)

func TestPackSpeed(t *testing.T) {
	if os.Getenv("KERNELS_REPORT") == "" {
		t.Skip()
	}
	r := rand.New(rand.NewPCG(2, 2))
	b := randSlice(r, 64*64)
	dst := make([]float32, 64*32)
	saved := hasAVX512
	for _, on := range []bool{true, false} {
		hasAVX512 = on
		d := bestOf(2000, func() {
			packBTrans(dst, b, 64, 0, 32, 0, 64, 32)
			packBTrans(dst, b, 64, 32, 18, 0, 64, 32)
		})
		fmt.Printf("avx512=%v pack 2 slivers 64x32: %v\n", on, d)
	}
	hasAVX512 = saved
	c := make([]float32, 50*64)
	a := randSlice(r, 50*64)
	d := bestOf(2000, func() {
		sgemmNative(kernelAVX512, false, true, 50, 50, 64, 1, a, 64, b, 64, 0, c, 50, false)
	})
	fmt.Printf("one 50x50x64 NT: %v\n", d)
	d = bestOf(2000, func() {
		sgemmNative(kernelAVX512, false, false, 50, 64, 50, 1, a, 50, b, 64, 0, c, 64, false)
	})
	fmt.Printf("one 50x64x50 NN: %v\n", d)
}
