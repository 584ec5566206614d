package kernels

// ISA names the instruction set the vector kernels and the SGEMM
// micro-kernel run on: "avx512", "avx2" or "go" (the portable code: other
// GOARCHes, the purego tag, CPUs without AVX2+FMA, or
// GODEBUG=cpu.avx2=off). Every ISA gives the same bits; this says which
// one ran, for reports and for the tests that check each.
func ISA() string {
	switch {
	case hasAVX512:
		return "avx512"
	case hasAVX2:
		return "avx2"
	}
	return "go"
}
