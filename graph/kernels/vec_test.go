package kernels

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// withImpls runs f once per vector implementation this machine has: the
// AVX-512 and AVX2 assembly (when supported) and the portable Go code.
func withImpls(t *testing.T, f func(t *testing.T)) {
	saved2, saved512 := hasAVX2, hasAVX512
	defer func() { hasAVX2, hasAVX512 = saved2, saved512 }()
	if saved512 {
		t.Run("avx512", f)
	}
	hasAVX512 = false
	if saved2 {
		t.Run("avx2", f)
	}
	hasAVX2 = false
	t.Run("go", f)
}

// testLens covers empty input, every tail length of an 8- and 16-wide loop,
// and a length above the parallel threshold.
var testLens = []int{0, 1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 33, 100, 1000, parallelMinElems + 77}

// sweep returns n points evenly spread over [lo, hi].
func sweep(lo, hi float64, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(lo + (hi-lo)*float64(i)/float64(n-1))
	}
	return s
}

const minNormal = 0x1p-126

func TestExp(t *testing.T) {
	in := sweep(-110, 90, 200001)
	in = append(in, 0, float32(math.Copysign(0, -1)), 1e-30, -1e-30, 88.72, 88.73, -87.33, -87.34, -103.9,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()))
	withImpls(t, func(t *testing.T) {
		got := make([]float32, len(in))
		Exp(got, in)
		worst := 0.0
		for i, x := range in {
			want := math.Exp(float64(x))
			g := float64(got[i])
			switch {
			case math.IsNaN(float64(x)):
				if !math.IsNaN(g) {
					t.Errorf("Exp(NaN) = %g", g)
				}
			case want > math.MaxFloat32:
				if !math.IsInf(g, 1) {
					t.Errorf("Exp(%g) = %g, want +Inf", x, g)
				}
			case want < minNormal:
				if math.Abs(g-want) > 2*minNormal*0x1p-23 && math.Abs(g-want) > 0x1p-149 {
					t.Errorf("Exp(%g) = %g, want %g (subnormal)", x, g, want)
				}
			default:
				rel := math.Abs(g-want) / want
				worst = max(worst, rel)
				if !(rel <= 2e-7) {
					t.Errorf("Exp(%g) = %g, want %g (rel err %.3g)", x, g, want, rel)
				}
			}
		}
		t.Logf("max relative error %.3g", worst)
	})
}

func TestExpAliasAndLengths(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	withImpls(t, func(t *testing.T) {
		for _, n := range testLens {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(r.NormFloat64() * 10)
			}
			want := make([]float32, n)
			expGo(want, x)
			Exp(x, x) // in place
			for i := range x {
				if d := math.Abs(float64(x[i]-want[i])) / float64(want[i]); d > 4e-7 {
					t.Fatalf("n=%d: Exp in place [%d] = %g, want %g", n, i, x[i], want[i])
				}
			}
		}
	})
}

// gelu64 is the float64 reference x·Φ(x), Φ through erfc for accuracy
// at negative x.
func gelu64(x float64) float64 { return x * 0.5 * math.Erfc(-x/math.Sqrt2) }

func TestGELU(t *testing.T) {
	in := sweep(-20, 20, 400001)
	in = append(in, 0, float32(math.Copysign(0, -1)), 1e-30, -1e-30, 1e-40, float32(math.Inf(1)), float32(math.NaN()), 1e30, -1e30)
	withImpls(t, func(t *testing.T) {
		got := make([]float32, len(in))
		GELU(got, in)
		worst := 0.0
		for i, x := range in {
			want := gelu64(float64(x))
			g := float64(got[i])
			switch {
			case math.IsNaN(float64(x)):
				if !math.IsNaN(g) {
					t.Errorf("GELU(NaN) = %g", g)
				}
			case math.IsInf(float64(x), 1):
				if !math.IsInf(g, 1) {
					t.Errorf("GELU(+Inf) = %g", g)
				}
			case math.Abs(want) < minNormal:
				if math.Abs(g-want) > 64*0x1p-149 { // subnormal results: a few ulps
					t.Errorf("GELU(%g) = %g, want %g", x, g, want)
				}
			default:
				rel := math.Abs(g-want) / math.Abs(want)
				worst = max(worst, rel)
				if !(rel <= 1e-6) {
					t.Errorf("GELU(%g) = %g, want %g (rel err %.3g)", x, g, want, rel)
				}
			}
		}
		t.Logf("max relative error %.3g", worst)
	})
}

func TestGELUBackward(t *testing.T) {
	x := sweep(-20, 20, 400001)
	x = append(x, 0, 1e-30, -1e-30, float32(math.NaN()))
	r := rand.New(rand.NewPCG(1, 9))
	dy := make([]float32, len(x))
	for i := range dy {
		dy[i] = float32(r.NormFloat64())
	}
	withImpls(t, func(t *testing.T) {
		got := make([]float32, len(x))
		GELUBackward(got, x, dy)
		worst := 0.0
		for i, xv := range x {
			v := float64(xv)
			phi := 0.5 * math.Erfc(-v/math.Sqrt2)
			xpdf := v * math.Exp(-v*v/2) / math.Sqrt(2*math.Pi)
			want := float64(dy[i]) * (phi + xpdf)
			g := float64(got[i])
			if math.IsNaN(v) {
				if !math.IsNaN(g) {
					t.Errorf("GELUBackward(NaN) = %g", g)
				}
				continue
			}
			scale := math.Abs(float64(dy[i])) * (math.Abs(phi) + math.Abs(xpdf))
			err := math.Abs(g - want)
			if scale > minNormal {
				worst = max(worst, err/scale)
			}
			if !(err <= 1e-6*scale+64*0x1p-149) { // subnormal results: a few ulps
				t.Errorf("GELUBackward(x=%g, dy=%g) = %g, want %g (err %.3g of %.3g)", xv, dy[i], g, want, err, scale)
			}
		}
		t.Logf("max error %.3g of dy·(|Φ|+|xφ|)", worst)
	})
}

// TestGELUTails checks every tail length against the Go version, in place.
func TestGELUTails(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 9))
	withImpls(t, func(t *testing.T) {
		for _, n := range testLens {
			x := make([]float32, n)
			dy := make([]float32, n)
			for i := range x {
				x[i] = float32(r.NormFloat64() * 3)
				dy[i] = float32(r.NormFloat64())
			}
			wantF, wantB := make([]float32, n), make([]float32, n)
			geluGo(wantF, x)
			geluBackwardGo(wantB, x, dy)
			gotB := append([]float32(nil), dy...)
			GELUBackward(gotB, x, gotB) // dx aliases dy
			GELU(x, x)
			for i := 0; i < n; i++ {
				if !close32(x[i], wantF[i], 1e-6) || !close32(gotB[i], wantB[i], 1e-5) {
					t.Fatalf("n=%d [%d]: GELU %g want %g, backward %g want %g", n, i, x[i], wantF[i], gotB[i], wantB[i])
				}
			}
		}
	})
}

func close32(got, want float32, tol float64) bool {
	return math.Abs(float64(got-want)) <= tol*math.Max(1, math.Abs(float64(want)))
}

func TestSoftmaxRows(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	withImpls(t, func(t *testing.T) {
		for _, shape := range [][2]int{{1, 1}, {3, 7}, {5, 50}, {4, 32}, {6, 16}, {2, 1000}, {1500, 50}, {4, 0}, {0, 5}} {
			rows, cols := shape[0], shape[1]
			x := make([]float32, rows*cols)
			for i := range x {
				x[i] = float32(r.NormFloat64() * 5)
			}
			if len(x) > 3 {
				x[1] = -1e30 // a masked-out logit
			}
			want := make([]float64, len(x))
			for i := 0; i < rows; i++ {
				row := x[i*cols : (i+1)*cols]
				m := math.Inf(-1)
				for _, v := range row {
					m = math.Max(m, float64(v))
				}
				s := 0.0
				for _, v := range row {
					s += math.Exp(float64(v) - m)
				}
				for j, v := range row {
					want[i*cols+j] = math.Exp(float64(v)-m) / s
				}
			}
			SoftmaxRows(x, rows, cols)
			for i := range x {
				if d := math.Abs(float64(x[i]) - want[i]); !(d <= 1e-6*want[i]+1e-9) {
					t.Fatalf("%dx%d: [%d] = %g, want %g", rows, cols, i, x[i], want[i])
				}
			}
		}
	})
}

func TestSoftmaxBackwardRows(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 9))
	withImpls(t, func(t *testing.T) {
		for _, shape := range [][2]int{{1, 1}, {3, 7}, {7, 50}, {1500, 50}} {
			rows, cols := shape[0], shape[1]
			y := make([]float32, rows*cols)
			dy := make([]float32, rows*cols)
			for i := range y {
				y[i] = float32(r.NormFloat64())
				dy[i] = float32(r.NormFloat64())
			}
			SoftmaxRows(y, rows, cols)
			dx := make([]float32, rows*cols)
			SoftmaxBackwardRows(dx, y, dy, rows, cols)
			for i := 0; i < rows; i++ {
				s, sAbs := 0.0, 0.0 // Σ y·dy and the scale of its rounding error
				for j := 0; j < cols; j++ {
					s += float64(y[i*cols+j]) * float64(dy[i*cols+j])
					sAbs += math.Abs(float64(y[i*cols+j]) * float64(dy[i*cols+j]))
				}
				for j := 0; j < cols; j++ {
					o := i*cols + j
					want := float64(y[o]) * (float64(dy[o]) - s)
					if math.Abs(float64(dx[o])-want) > 1e-6*(math.Abs(float64(y[o]))*(math.Abs(float64(dy[o]))+sAbs))+1e-12 {
						t.Fatalf("%dx%d: dx[%d] = %g, want %g", rows, cols, o, dx[o], want)
					}
				}
			}
		}
	})
}

func TestBLAS1(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 9))
	withImpls(t, func(t *testing.T) {
		for _, n := range testLens {
			x, y := randSlice(r, n), randSlice(r, n)
			y0 := append([]float32(nil), y...)
			var dot float64
			for i := range x {
				dot += float64(x[i]) * float64(y[i])
			}
			if got := Dot(x, y); math.Abs(float64(got)-dot) > 1e-6*float64(n+1) {
				t.Errorf("n=%d: Dot = %g, want %g", n, got, dot)
			}
			Axpy(-1.5, x, y)
			for i := range y {
				if want := float64(y0[i]) - 1.5*float64(x[i]); math.Abs(float64(y[i])-want) > 1e-6*(1+math.Abs(want)) {
					t.Fatalf("n=%d: Axpy y[%d] = %g, want %g", n, i, y[i], want)
				}
			}
			Scale(0.25, y)
			for i := range y {
				if want := 0.25 * (float64(y0[i]) - 1.5*float64(x[i])); math.Abs(float64(y[i])-want) > 1e-6*(1+math.Abs(want)) {
					t.Fatalf("n=%d: Scale y[%d] = %g, want %g", n, i, y[i], want)
				}
			}
		}
	})
}

func TestAddBiasColSum(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 9))
	withImpls(t, func(t *testing.T) {
		for _, shape := range [][2]int{{1, 1}, {3, 7}, {5, 33}, {700, 192}, {0, 3}} {
			rows, cols := shape[0], shape[1]
			x := randSlice(r, rows*cols)
			bias := randSlice(r, cols)
			x0 := append([]float32(nil), x...)
			AddBias(x, bias, rows, cols)
			for i := range x {
				if x[i] != x0[i]+bias[i%cols] {
					t.Fatalf("%dx%d: AddBias x[%d] = %g, want %g", rows, cols, i, x[i], x0[i]+bias[i%cols])
				}
			}
			dst := randSlice(r, cols)
			want := make([]float64, cols)
			for c := range want {
				want[c] = float64(dst[c])
				for i := 0; i < rows; i++ {
					want[c] += float64(x[i*cols+c])
				}
			}
			ColSum(dst, x, rows, cols)
			for c := range dst {
				if math.Abs(float64(dst[c])-want[c]) > 1e-6*float64(rows+1)*2 {
					t.Fatalf("%dx%d: ColSum[%d] = %g, want %g", rows, cols, c, dst[c], want[c])
				}
			}
		}
	})
}

// TestColSumDeterministic checks that the sums are those of the documented
// order on 1, 2, 3 and 16 cores, bit for bit: each fixed chunk of rows
// summed in row order from zero, the chunks' sums added to dst in chunk
// order (one chunk: the rows added to dst directly). Summed in one pass
// over all rows instead, the last bits differ (the control).
func TestColSumDeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	for _, sh := range [][2]int{{6400, 64}, {3000, 96}, {300, 1536}, {100, 40}, {2000, 50}} {
		rows, cols := sh[0], sh[1]
		x, dst0 := randSlice(r, rows*cols), randSlice(r, cols)
		want := append([]float32(nil), dst0...)
		step := reduceChunkRows(cols)
		if step >= rows {
			for i := 0; i < rows; i++ {
				for j := range want {
					want[j] += x[i*cols+j]
				}
			}
		} else {
			for lo := 0; lo < rows; lo += step {
				part := make([]float32, cols)
				for i := lo; i < min(lo+step, rows); i++ {
					for j := range part {
						part[j] += x[i*cols+j]
					}
				}
				for j := range want {
					want[j] += part[j]
				}
			}
		}
		for _, procs := range []int{1, 2, 3, 16} {
			func() {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				got := append([]float32(nil), dst0...)
				ColSum(got, x, rows, cols)
				for j := range got {
					if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
						t.Fatalf("%dx%d on %d cores: ColSum[%d] = %g, want %g bit for bit", rows, cols, procs, j, got[j], want[j])
					}
				}
			}()
		}
		if rows == 6400 {
			one := append([]float32(nil), dst0...)
			for i := 0; i < rows; i++ {
				for j := range one {
					one[j] += x[i*cols+j]
				}
			}
			same := true
			for j := range one {
				same = same && one[j] == want[j]
			}
			if same {
				t.Errorf("%dx%d: one pass over all rows gives the chunked sums: the test cannot see the order", rows, cols)
			}
		}
	}
}

func TestVecPanics(t *testing.T) {
	x := make([]float32, 6)
	for _, tc := range []struct {
		name string
		call func()
		want string
	}{
		{"Exp", func() { Exp(x[:5], x) }, "kernels.Exp: len(dst) = 5, want 6"},
		{"GELUBackward", func() { GELUBackward(x, x, x[:2]) }, "len(dy) = 2"},
		{"Softmax", func() { SoftmaxRows(x, 2, 4) }, "len(x) = 6, want 8"},
		{"AddBias", func() { AddBias(x, x[:2], 2, 3) }, "len(bias) = 2, want 3"},
		{"ColSum", func() { ColSum(x[:2], x, 2, 3) }, "len(dst) = 2, want 3"},
		{"Dot", func() { Dot(x, x[:1]) }, "len(y) = 1"},
		{"LayerNorm", func() { LayerNormRows(x, x[:2], x[:2], x, x[:2], nil, 2, 3, 1e-6) }, "len(w) = 2, want 3"},
		{"LayerNormEps", func() { LayerNormRows(x, x[:2], x[:2], x, nil, nil, 2, 3, -1) }, "eps = -1"},
		{"LayerNormBackward", func() { LayerNormBackwardRows(x, x[:1], nil, x, x, x[:2], x[:2], nil, 2, 3) }, "len(dw) = 1"},
		{"negative", func() { SoftmaxRows(x, -1, 3) }, "negative shape"},
	} {
		t.Run(tc.name, func(t *testing.T) { wantPanic(t, tc.want, tc.call) })
	}
}
