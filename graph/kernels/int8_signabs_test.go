//go:build amd64 && !purego

package kernels

import (
	"math/rand/v2"
	"testing"
)

// int8SignAbs writes a − 128 as a signed byte and its magnitude (128 for
// a = 0), in the assembly's 32-byte steps and the Go tail alike.
func TestInt8SignAbs(t *testing.T) {
	if !hasAVX2 {
		t.Skip("the panel kernel's operands are for AVX2")
	}
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 4, 31, 32, 33, 48, 64, 100} {
		q := make([]uint8, n)
		for i := range q {
			q[i] = uint8(r.IntN(256))
		}
		if n > 2 {
			q[0], q[1], q[2] = 0, 128, 255
		}
		s, abs := make([]uint8, n), make([]uint8, n)
		int8SignAbs(s, abs, q)
		for i, a := range q {
			d := int(a) - 128
			m := d
			if m < 0 {
				m = -m
			}
			if int8(s[i]) != int8(d) || int(abs[i]) != m {
				t.Fatalf("n %d, q[%d] = %d: s %d, abs %d; want %d, %d", n, i, a, int8(s[i]), abs[i], d, m)
			}
		}
	}
}
