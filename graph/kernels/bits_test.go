package kernels

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// The kernel-bits contract: every implementation of every kernel (the
// portable Go code, AVX2 and AVX-512 assembly, each SGEMM micro-kernel, on
// any number of cores) gives the same float32 bits. TestKernelsSameBits
// compares the implementations this CPU has with each other;
// TestKernelDigests compares them with digests that hold on every CPU, so
// a machine that lacks an instruction set still checks its kernels against
// the bits of the others. Inputs hold no NaN (a NaN's payload is not part
// of the contract).

// bitsJob runs one kernel on fixed inputs and returns its outputs.
type bitsJob struct {
	name string
	run  func() []float32
}

// bitsInput returns n deterministic values: normal ones of varied scale,
// with some zeros, negative zeros and subnormals mixed in.
func bitsInput(seed uint64, n int, scale float64) []float32 {
	r := rand.New(rand.NewPCG(seed, 99))
	x := make([]float32, n)
	for i := range x {
		switch r.IntN(64) {
		case 0:
			x[i] = 0
		case 1:
			x[i] = float32(math.Copysign(0, -1))
		case 2:
			x[i] = math.Float32frombits(r.Uint32()&0x807fffff | 1) // subnormal
		default:
			x[i] = float32(r.NormFloat64() * scale * math.Exp(r.NormFloat64()))
		}
	}
	return x
}

// bitsLens covers every tail of a 16-lane loop, short rows, the models'
// row lengths (50, 64, 192, 197, 768) and one above the parallel threshold.
var bitsLens = func() []int {
	var ls []int
	for n := 0; n <= 40; n++ {
		ls = append(ls, n)
	}
	return append(ls, 47, 50, 63, 64, 65, 192, 197, 768, 1000, parallelMinElems+77)
}()

// bitsShapes are (rows, cols) pairs for the row kernels: one and two rows
// at a time, every tail, and some large enough to split over the cores.
var bitsShapes = func() [][2]int {
	var s [][2]int
	for _, rows := range []int{1, 2, 3, 5} {
		for cols := 1; cols <= 40; cols++ {
			s = append(s, [2]int{rows, cols})
		}
		for _, cols := range []int{47, 50, 64, 192, 197, 200, 768} {
			s = append(s, [2]int{rows, cols})
		}
	}
	return append(s, [2]int{400, 192}, [2]int{1700, 50}, [2]int{130, 768})
}()

func bitsJobs() []bitsJob {
	var jobs []bitsJob
	vec := func(name string, f func(n int, seed uint64) []float32) {
		jobs = append(jobs, bitsJob{name, func() []float32 {
			var out []float32
			for i, n := range bitsLens {
				out = append(out, f(n, uint64(i))...)
			}
			return out
		}})
	}
	rows := func(name string, f func(rows, cols int, seed uint64) []float32) {
		jobs = append(jobs, bitsJob{name, func() []float32 {
			var out []float32
			for i, s := range bitsShapes {
				out = append(out, f(s[0], s[1], uint64(i))...)
			}
			return out
		}})
	}
	jobs = append(jobs,
		bitsJob{"Exp sweep", func() []float32 {
			x := sweep(-110, 95, 100003)
			Exp(x, x)
			return x
		}},
		bitsJob{"GELU sweep", func() []float32 {
			x := append(sweep(-20, 20, 100003), sweep(-1e4, 1e4, 1001)...)
			GELU(x, x)
			return x
		}},
		bitsJob{"GELUBackward sweep", func() []float32 {
			x := append(sweep(-20, 20, 100003), sweep(-1e4, 1e4, 1001)...)
			dy := bitsInput(3, len(x), 1)
			GELUBackward(dy, x, dy)
			return dy
		}},
	)
	vec("Exp", func(n int, seed uint64) []float32 {
		x := bitsInput(seed, n, 10)
		Exp(x, x)
		return x
	})
	vec("GELU", func(n int, seed uint64) []float32 {
		x := bitsInput(seed, n, 2)
		GELU(x, x)
		return x
	})
	vec("Axpy", func(n int, seed uint64) []float32 {
		x, y := bitsInput(seed, n, 1), bitsInput(seed+1000, n, 1)
		Axpy(-0.37, x, y)
		return y
	})
	vec("Scale", func(n int, seed uint64) []float32 {
		x := bitsInput(seed, n, 1)
		Scale(1.7, x)
		return x
	})
	vec("Dot", func(n int, seed uint64) []float32 {
		return []float32{Dot(bitsInput(seed, n, 1), bitsInput(seed+1000, n, 1))}
	})
	vec("EpilogueRow", func(n int, seed uint64) []float32 {
		y, bias, r := bitsInput(seed, n, 1), bitsInput(seed+1000, n, 1), bitsInput(seed+2000, n, 1)
		EpilogueRow(y, bias, r, true)
		return y
	})
	// The two forms the serving products take: fc1's bias and GELU, and
	// attn.proj's and fc2's bias and residual sum.
	vec("EpilogueRow bias GELU", func(n int, seed uint64) []float32 {
		y, bias := bitsInput(seed, n, 4), bitsInput(seed+1000, n, 1)
		EpilogueRow(y, bias, nil, true)
		return y
	})
	vec("EpilogueRow bias residual", func(n int, seed uint64) []float32 {
		y, bias, r := bitsInput(seed, n, 1), bitsInput(seed+1000, n, 1), bitsInput(seed+2000, n, 1)
		EpilogueRow(y, bias, r, false)
		return y
	})
	rows("SoftmaxRows", func(rows, cols int, seed uint64) []float32 {
		x := bitsInput(seed, rows*cols, 3)
		SoftmaxRows(x, rows, cols)
		return x
	})
	rows("SoftmaxBackwardRows", func(rows, cols int, seed uint64) []float32 {
		y := bitsInput(seed, rows*cols, 3)
		SoftmaxRows(y, rows, cols)
		dy := bitsInput(seed+1000, rows*cols, 1)
		SoftmaxBackwardRows(dy, y, dy, rows, cols)
		return dy
	})
	rows("LayerNormRows", func(rows, cols int, seed uint64) []float32 {
		x := bitsInput(seed, rows*cols, 2)
		w, b := bitsInput(seed+1000, cols, 1), bitsInput(seed+2000, cols, 1)
		y, mean, rstd := make([]float32, len(x)), make([]float32, rows), make([]float32, rows)
		LayerNormRows(y, mean, rstd, x, w, b, rows, cols, 1e-6)
		return append(append(y, mean...), rstd...)
	})
	rows("LayerNormBackwardRowsAdd", func(rows, cols int, seed uint64) []float32 {
		x := bitsInput(seed, rows*cols, 2)
		w := bitsInput(seed+1000, cols, 1)
		y, mean, rstd := make([]float32, len(x)), make([]float32, rows), make([]float32, rows)
		LayerNormRows(y, mean, rstd, x, w, nil, rows, cols, 1e-6)
		dy, res := bitsInput(seed+2000, len(x), 1), bitsInput(seed+3000, len(x), 1)
		dw, db := bitsInput(seed+4000, cols, 1), bitsInput(seed+5000, cols, 1)
		dx := make([]float32, len(x))
		LayerNormBackwardRowsAdd(dx, dw, db, dy, x, mean, rstd, w, res, rows, cols)
		return append(append(dx, dw...), db...)
	})
	rows("AddBias+ColSum", func(rows, cols int, seed uint64) []float32 {
		x, bias := bitsInput(seed, rows*cols, 1), bitsInput(seed+1000, cols, 1)
		AddBias(x, bias, rows, cols)
		dst := bitsInput(seed+2000, cols, 1)
		ColSum(dst, x, rows, cols)
		return dst
	})
	return jobs
}

// bitsSgemm runs every gemmCase through kern, serial and split over the
// cores, on the same deterministic operands.
func bitsSgemm(kern *gemmKernel) []float32 {
	r := rand.New(rand.NewPCG(11, 12))
	var out []float32
	for _, tc := range gemmCases() {
		a, lda, b, ldb, c, ldc := tc.operands(r)
		c2 := append([]float32(nil), c...)
		sgemmNative(kern, tc.tA, tc.tB, tc.m, tc.n, tc.k, tc.alpha, a, lda, b, ldb, tc.beta, c, ldc, false)
		sgemmNative(kern, tc.tA, tc.tB, tc.m, tc.n, tc.k, tc.alpha, a, lda, b, ldb, tc.beta, c2, ldc, true)
		out = append(append(out, c...), c2...)
	}
	return out
}

func bitsDigest(x []float32) string {
	h := sha256.New()
	var b [4]byte
	for _, v := range x {
		binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
		h.Write(b[:])
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// firstDiff returns the index of the first element whose bits differ, or -1.
func firstDiff(a, b []float32) int {
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	return -1
}

// TestKernelsSameBits runs every kernel under each implementation this CPU
// has, on 1 and 2 cores, and requires the portable Go code's bits.
func TestKernelsSameBits(t *testing.T) {
	if testing.Short() {
		t.Skip("every kernel under every implementation")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	want := map[string][]float32{}
	saved2, saved512 := hasAVX2, hasAVX512
	defer func() { hasAVX2, hasAVX512 = saved2, saved512 }()
	hasAVX2, hasAVX512 = false, false
	runtime.GOMAXPROCS(1)
	for _, j := range bitsJobs() {
		want[j.name] = j.run()
	}
	impls := []struct {
		name         string
		avx2, avx512 bool
	}{{"go", false, false}, {"avx2", true, false}, {"avx512", true, true}}
	for _, im := range impls {
		if im.avx2 && !saved2 || im.avx512 && !saved512 {
			t.Logf("%s: not on this CPU; its bits are checked by TestKernelDigests where it runs", im.name)
			continue
		}
		hasAVX2, hasAVX512 = im.avx2, im.avx512
		for _, procs := range []int{1, 2} {
			runtime.GOMAXPROCS(procs)
			for _, j := range bitsJobs() {
				got := j.run()
				if i := firstDiff(got, want[j.name]); i >= 0 {
					t.Errorf("%s on %s, %d cores: element %d is %#08x, go 1 core %#08x",
						j.name, im.name, procs, i, math.Float32bits(got[i]), math.Float32bits(want[j.name][i]))
				}
			}
		}
	}
	hasAVX2, hasAVX512 = saved2, saved512
	ref := bitsSgemm(kernelGo)
	for _, k := range allKernels() {
		if i := firstDiff(bitsSgemm(k), ref); i >= 0 {
			t.Errorf("SGEMM %s: element %d differs from the go 4x4 kernel", k.name, i)
		}
	}
}

// kernelDigests are the kernels' outputs on bitsJobs' inputs, the same on
// every CPU and implementation (first 16 hex digits of a SHA-256 of the
// float32 bits).
var kernelDigests = map[string]string{
	"Exp sweep":                 "bd5a9ba8742637e5",
	"GELU sweep":                "fd25fbc9126395c8",
	"GELUBackward sweep":        "7f41e63e6e56b9d0",
	"Exp":                       "29e5abb264e6635c",
	"GELU":                      "a987e0603895a0e4",
	"Axpy":                      "645fec1c8acc47f4",
	"Scale":                     "9cb5ba3ced612a39",
	"Dot":                       "bf842987aa39349b",
	"EpilogueRow":               "346e0487329fe8f3",
	"EpilogueRow bias GELU":     "10c195145577d6a2",
	"EpilogueRow bias residual": "4e44deb9d9327de2",
	"SoftmaxRows":               "4c558f9249a2cb3f",
	"SoftmaxBackwardRows":       "5f0e59c8716d091f",
	"LayerNormRows":             "3052549ed8a3b5d4",
	"LayerNormBackwardRowsAdd":  "91b0d7d5f3cec1e3",
	"AddBias+ColSum":            "78f2d0915fbf5d29",
	"SGEMM":                     "0669971fcc44aa8b",
}

// TestKernelDigests requires the digests in kernelDigests from whatever
// implementation this build and CPU choose, and from every SGEMM
// micro-kernel this CPU has.
func TestKernelDigests(t *testing.T) {
	if testing.Short() {
		t.Skip("every kernel")
	}
	jobs := bitsJobs()
	for _, k := range allKernels() {
		k := k
		jobs = append(jobs, bitsJob{"SGEMM " + k.name, func() []float32 { return bitsSgemm(k) }})
	}
	for _, j := range jobs {
		name := j.name
		if len(name) > 6 && name[:6] == "SGEMM " {
			name = "SGEMM"
		}
		got := bitsDigest(j.run())
		if want, ok := kernelDigests[name]; !ok || got != want {
			t.Errorf("%s: digest %s, want %q", j.name, got, want)
		}
	}
}
