package data

import (
	"math"
	"math/bits"
)

// Every random draw in this package comes from an rng whose state is a hash of
// the values that identify the draw (seed, epoch, position, purpose). No
// generator is shared between samples or goroutines, which is what makes the
// loader's output independent of its worker count.

// Purposes, mixed into stream keys so that turning one augmentation on does not
// change the draws of another.
const (
	streamShuffle uint64 = iota + 1
	streamCrop
	streamFlip
	streamErase
	streamRandAug
	streamMixup
	streamRRC
)

const golden64 = 0x9e3779b97f4a7c15

// splitmix64's finalizer: a bijection on uint64 with good avalanche.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// hashKey folds the parts into one 64-bit key.
func hashKey(parts ...uint64) uint64 {
	h := uint64(0x243f6a8885a308d3)
	for _, p := range parts {
		h = mix64(h + golden64 ^ p)
	}
	return h
}

// rng is a splitmix64 stream. The zero value is a valid stream.
type rng struct{ s uint64 }

// newRNG returns the stream keyed by parts.
func newRNG(parts ...uint64) *rng { return &rng{s: hashKey(parts...)} }

func (r *rng) uint64() uint64 {
	r.s += golden64
	return mix64(r.s)
}

// float64 returns a uniform value in [0, 1).
func (r *rng) float64() float64 { return float64(r.uint64()>>11) * 0x1p-53 }

// uniform returns a uniform value in [a, b).
func (r *rng) uniform(a, b float64) float64 { return a + (b-a)*r.float64() }

// intn returns a uniform integer in [0, n); n must be > 0 (Lemire's method).
func (r *rng) intn(n int) int {
	un := uint64(n)
	hi, lo := bits.Mul64(r.uint64(), un)
	if lo < un {
		thresh := -un % un
		for lo < thresh {
			hi, lo = bits.Mul64(r.uint64(), un)
		}
	}
	return int(hi)
}

// intRange returns a uniform integer in [lo, hi) like numpy's randint; hi > lo.
func (r *rng) intRange(lo, hi int) int { return lo + r.intn(hi-lo) }

// normal returns a standard normal value (Box-Muller).
func (r *rng) normal() float64 {
	u1 := 1 - r.float64() // (0, 1]
	u2 := r.float64()
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}

// gamma returns a Gamma(a, 1) value, a > 0 (Marsaglia and Tsang).
func (r *rng) gamma(a float64) float64 {
	if a < 1 {
		u := 1 - r.float64()
		return r.gamma(a+1) * math.Pow(u, 1/a)
	}
	d := a - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		var x, v float64
		for v <= 0 {
			x = r.normal()
			v = 1 + c*x
		}
		v = v * v * v
		u := 1 - r.float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

// beta returns a Beta(a, b) value, a, b > 0.
func (r *rng) beta(a, b float64) float64 {
	x := r.gamma(a)
	y := r.gamma(b)
	if x+y == 0 {
		// Both underflowed (tiny alphas): the distribution is nearly
		// Bernoulli(a/(a+b)) on {0, 1}.
		if r.float64() < a/(a+b) {
			return 1
		}
		return 0
	}
	return x / (x + y)
}

// permutation returns a uniform random permutation of 0..n-1 (Fisher-Yates).
func (r *rng) permutation(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	for i := n - 1; i > 0; i-- {
		j := r.intn(i + 1)
		p[i], p[j] = p[j], p[i]
	}
	return p
}
