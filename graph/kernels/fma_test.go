package kernels

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// exactFMA32 is x·y + z rounded once to float32, by exact arithmetic.
func exactFMA32(x, y, z float32) float32 {
	if math.IsInf(float64(x), 0) || math.IsInf(float64(y), 0) || math.IsInf(float64(z), 0) ||
		x != x || y != y || z != z {
		return float32(float64(x)*float64(y) + float64(z))
	}
	p := new(big.Float).SetPrec(600).Mul(big.NewFloat(float64(x)), big.NewFloat(float64(y)))
	s := new(big.Float).SetPrec(600).Add(p, big.NewFloat(float64(z)))
	f, _ := s.Float32()
	if f == 0 && s.Sign() < 0 {
		return float32(math.Copysign(0, -1))
	}
	if f == 0 && s.Sign() == 0 {
		// IEEE: an exact zero sum is +0 unless both addends are −0.
		return float32(float64(x)*float64(y) + float64(z))
	}
	return f
}

// fmaCases returns inputs that stress the double rounding fma32 must avoid:
// products just off a float32 midpoint once z is added, results in and
// near the subnormal range and near overflow, and plain random triples.
func fmaCases() [][3]float32 {
	r := rand.New(rand.NewPCG(7, 8))
	var cs [][3]float32
	add := func(x, y, z float32) { cs = append(cs, [3]float32{x, y, z}) }
	// 1 + 2^-24 + tiny: the float64 sum rounds to the midpoint 1 + 2^-24.
	// (1 + k·2^-23)·h·(1 − k·2^-23) = h·(1 − k²·2^-46), h half an ulp of z:
	// z ± that rounds in float64 to the midpoint z ± h, while the exact sum
	// lies just inside it; the midpoint's tie then goes the wrong way for
	// one parity of z.
	add(1+0x1p-23, 0x1p-24*(1-0x1p-23), 1+0x1p-23)
	// The same around subnormal z, whose half ulp is 2^-150.
	for k := 1; k < 4000; k++ {
		z := float32(1+float64(r.Uint32()>>9)*0x1p-23) * float32(math.Ldexp(1, r.IntN(240)-140))
		if k%2 == 0 {
			z = math.Float32frombits(r.Uint32() & 0x7fffff) // subnormal
		}
		h := float64(math.Nextafter32(z, float32(math.Inf(1)))-z) / 2
		sc := math.Ldexp(1, int(math.Floor(math.Log2(h)/2)))
		x := float32(sc * (1 + float64(k)*0x1p-23))
		y := float32(h / sc * (1 - float64(k)*0x1p-23))
		for _, sy := range []float32{1, -1} {
			for _, sz := range []float32{1, -1} {
				add(x, sy*y, sz*z)
			}
		}
	}
	for range 20000 {
		// x·y close to half an ulp of z, with low bits far below it.
		z := float32(1+r.Float64()) * float32(math.Ldexp(1, r.IntN(60)-30))
		e := math.Float32bits(z)>>23&0xff - 127 - 24 // exponent of half an ulp of z
		x := float32(1 + float64(r.Uint32()>>8)*0x1p-24)
		y := float32(math.Ldexp(1+float64(r.Uint32()>>8)*0x1p-24, int(e)))
		if r.IntN(2) == 0 {
			y = -y
		}
		add(x, y, z)
		add(x, y, -z)
	}
	for range 20000 {
		x := math.Float32frombits(r.Uint32())
		y := math.Float32frombits(r.Uint32())
		z := math.Float32frombits(r.Uint32())
		add(x, y, z)
		// Subnormal and tiny results.
		add(float32(r.NormFloat64())*0x1p-70, float32(r.NormFloat64())*0x1p-70, float32(r.NormFloat64())*0x1p-140)
		// Near overflow.
		add(float32(r.NormFloat64())*0x1p64, float32(r.NormFloat64())*0x1p64, float32(r.NormFloat64())*0x1p127)
		// Plain.
		add(float32(r.NormFloat64()), float32(r.NormFloat64()), float32(r.NormFloat64()))
	}
	return cs
}

func sameBits(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b)
}

// TestFMA32Exact checks fma32 against exact arithmetic: one rounding of
// the exact x·y + z, on cases built to catch double rounding.
func TestFMA32Exact(t *testing.T) {
	bad := 0
	for _, c := range fmaCases() {
		got, want := fma32(c[0], c[1], c[2]), exactFMA32(c[0], c[1], c[2])
		if !sameBits(got, want) {
			if bad++; bad <= 10 {
				t.Errorf("fma32(%g, %g, %g) = %g (%#08x), want %g (%#08x)", c[0], c[1], c[2], got, math.Float32bits(got), want, math.Float32bits(want))
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d wrong", bad)
	}
}

// TestFMA32Hardware checks fma32 against the CPU's VFMADD231SS (through
// the AVX2 Axpy on single elements), where the CPU has FMA.
func TestFMA32Hardware(t *testing.T) {
	if !hasAVX2 {
		t.Skip("this CPU (or build) has no FMA instructions: fma32 is checked against exact arithmetic only")
	}
	bad := 0
	for _, c := range fmaCases() {
		y := []float32{c[2]}
		axpyVec(c[1], []float32{c[0]}, y)
		if got := fma32(c[0], c[1], c[2]); !sameBits(got, y[0]) {
			if bad++; bad <= 10 {
				t.Errorf("fma32(%g, %g, %g) = %#08x, VFMADD231SS %#08x", c[0], c[1], c[2], math.Float32bits(got), math.Float32bits(y[0]))
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d differ", bad)
	}
}
