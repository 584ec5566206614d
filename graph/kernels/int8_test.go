package kernels

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// int8Tiles returns every int8 tile this machine runs, by name.
func int8Tiles() map[string]int8TileFunc {
	tiles := map[string]int8TileFunc{"go": int8TileGo}
	saved := hasAVX2
	defer func() { hasAVX2 = saved }()
	if saved {
		tiles[Int8ISA()] = bestInt8Tile()
	}
	return tiles
}

// TestInt8TileSums: every tile gives the exact integer sums of
// (a − 128)·w, at the extremes too (activations 0 and 255 with weights
// ±Int8WeightMax), over depths from none to several hundred groups.
func TestInt8TileSums(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, k4 := range []int{0, 1, 2, 3, 7, 96, 768} {
		for _, fill := range []string{"random", "max", "min", "zero-max", "zero-min"} {
			a := make([][]uint8, 4)
			for i := range a {
				a[i] = make([]uint8, 4*k4+1)
				for d := range a[i] {
					switch fill {
					case "random":
						a[i][d] = uint8(r.IntN(256))
					case "zero-max", "zero-min":
						a[i][d] = 0
					default:
						a[i][d] = 255
					}
				}
			}
			b := make([]int8, 64*k4+1)
			for d := range b {
				switch fill {
				case "random":
					b[d] = int8(r.IntN(2*Int8WeightMax+1) - Int8WeightMax)
				case "max", "zero-max":
					b[d] = Int8WeightMax
				case "min", "zero-min":
					b[d] = -Int8WeightMax
				}
			}
			var want [64]int32
			for row := 0; row < 4; row++ {
				for c := 0; c < 16; c++ {
					var s int64
					for d := 0; d < 4*k4; d++ {
						s += (int64(a[row][d]) - 128) * int64(b[(d/4)*64+c*4+d%4])
					}
					want[row*16+c] = int32(s) + 7 // the tile adds to what it holds
				}
			}
			for name, tile := range int8Tiles() {
				var got [64]int32
				for i := range got {
					got[i] = 7
				}
				tile(k4, &a[0][0], &a[1][0], &a[2][0], &a[3][0], &b[0], &got)
				if got != want {
					t.Errorf("%s, k4 %d, %s: sums %v, want %v", name, k4, fill, got[:4], want[:4])
				}
			}
		}
	}
}

// int8LinearRef is Int8Linear's definition, computed plainly.
func int8LinearRef(x []float32, m, k int, w []float32, n int, b []float32) []float32 {
	p := QuantizeInt8(w, n, k, k)
	kp := p.kp
	q := make([]uint8, m*kp)
	sx, zx := make([]float32, m), make([]int32, m)
	QuantizeRowsUint8(q, kp, sx, zx, x, k, m, k)
	y := make([]float32, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var acc int32
			for d := 0; d < k; d++ {
				acc += int32(q[i*kp+d]) * int32(p.data[j/16*kp*16+(d/4)*64+(j%16)*4+d%4])
			}
			v := float32(acc - zx[i]*p.colSum[j])
			v = float32(v * float32(sx[i]*p.Scale[j]))
			if b != nil {
				v = float32(v + b[j])
			}
			y[i*n+j] = v
		}
	}
	return y
}

func randFloats(r *rand.Rand, n int, scale float64) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(r.NormFloat64() * scale)
	}
	return s
}

// TestInt8LinearDefinition: Int8Linear equals its definition bit for bit on
// every tile, over shapes with partial tiles, partial groups of depth and
// several row blocks, with and without a bias; and it is close to the
// float64 product: within the error the two quantizations allow.
func TestInt8LinearDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	saved := hasAVX2
	defer func() { hasAVX2 = saved }()
	// {4, 16, 12} and {68, 16, 12}: rows of 12 bytes, under one AVX2 step
	// of the quantizer, read by the panel kernel.
	for _, sh := range [][3]int{{1, 1, 1}, {1, 16, 4}, {3, 17, 5}, {5, 33, 37}, {4, 16, 384}, {130, 40, 64}, {197, 48, 96}, {4, 16, 12}, {68, 16, 12}} {
		m, n, k := sh[0], sh[1], sh[2]
		x, w := randFloats(r, m*k, 1), randFloats(r, n*k, 0.05)
		for _, bias := range [][]float32{nil, randFloats(r, n, 0.1)} {
			want := int8LinearRef(x, m, k, w, n, bias)
			for _, impl := range []bool{saved, false} {
				hasAVX2 = impl
				got := make([]float32, m*n)
				Int8Linear(got, n, x, k, m, QuantizeInt8(w, n, k, k), bias)
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s, m %d n %d k %d: y[%d] = %v, definition %v", Int8ISA(), m, n, k, i, got[i], want[i])
					}
				}
				// The error of the two roundings: each |Δx| ≤ sx/2, each
				// |Δw| ≤ sw/2, summed over k.
				for i := 0; i < m; i++ {
					xmax := 0.0
					for d := 0; d < k; d++ {
						xmax = max(xmax, math.Abs(float64(x[i*k+d])))
					}
					for j := 0; j < n; j++ {
						var f, wmax float64
						for d := 0; d < k; d++ {
							f += float64(x[i*k+d]) * float64(w[j*k+d])
							wmax = max(wmax, math.Abs(float64(w[j*k+d])))
						}
						if bias != nil {
							f += float64(bias[j])
						}
						sx, sw := 2*xmax/255, wmax/Int8WeightMax
						bound := float64(k)*(sx/2*wmax+sw/2*xmax+sx*sw/4) + 1e-5*math.Abs(f) + 1e-6
						if d := math.Abs(float64(got[i*n+j]) - f); d > bound {
							t.Fatalf("m %d n %d k %d: y[%d,%d] = %v, float64 %v: off by %g > %g", m, n, k, i, j, got[i*n+j], f, d, bound)
						}
					}
				}
			}
		}
	}
}

// TestInt8NonFinite: a NaN or an infinity in a row of x makes that row's
// outputs NaN, and one in a row of W that output channel's; the rest are
// untouched.
func TestInt8NonFinite(t *testing.T) {
	const m, n, k = 3, 5, 8
	r := rand.New(rand.NewPCG(5, 6))
	x, w := randFloats(r, m*k, 1), randFloats(r, n*k, 0.1)
	clean := make([]float32, m*n)
	Int8Linear(clean, n, x, k, m, QuantizeInt8(w, n, k, k), nil)
	x[1*k+3] = float32(math.Inf(1))
	w[2*k+5] = float32(math.NaN())
	y := make([]float32, m*n)
	Int8Linear(y, n, x, k, m, QuantizeInt8(w, n, k, k), nil)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			nan := y[i*n+j] != y[i*n+j]
			if want := i == 1 || j == 2; nan != want {
				t.Errorf("y[%d,%d] = %v, want NaN %v", i, j, y[i*n+j], want)
			}
			if !nan && y[i*n+j] != clean[i*n+j] {
				t.Errorf("y[%d,%d] = %v, %v without the non-finite values", i, j, y[i*n+j], clean[i*n+j])
			}
		}
	}
}

// TestInt8Quantize pins the quantization's rules: ranges widened to hold
// 0, ties to even, a row of zeros, weights clamped to ±64.
func TestInt8Quantize(t *testing.T) {
	for _, tc := range []struct {
		x     []float32
		q     []uint8
		scale float32
		zero  int32
	}{
		{[]float32{0, 0}, []uint8{0, 0, 0, 0}, 1, 0},
		{[]float32{1, 2, 3, 255}, []uint8{1, 2, 3, 255}, 1, 0},
		// scale 257.5/255; zero point round(255/scale) = round(252.52)
		{[]float32{-255, 0, 1.5, 2.5}, []uint8{0, 253, 254, 255}, 257.5 / 255, 253},
		// 1/float32(2/255) rounds to just under 127.5 in float32
		{[]float32{-1, 1}, []uint8{0, 254, 0, 0}, 2.0 / 255, 127},
		{[]float32{0.5, 1.5, 255}, []uint8{0, 2, 255, 0}, 1, 0},
	} {
		q := make([]uint8, 4)
		s, z := make([]float32, 1), make([]int32, 1)
		QuantizeRowsUint8(q, 4, s, z, tc.x, len(tc.x), 1, len(tc.x))
		if fmt.Sprint(q) != fmt.Sprint(tc.q) || s[0] != tc.scale || z[0] != tc.zero {
			t.Errorf("%v: q %v scale %v zero %d, want %v %v %d", tc.x, q, s[0], z[0], tc.q, tc.scale, tc.zero)
		}
	}
	// scale 2/64 = 1/32: 0.5 and 1.5 round to the even 0 and 2
	p := QuantizeInt8([]float32{-2, 1, 0.015625, 0.046875}, 1, 4, 4)
	if got := p.data[:4]; fmt.Sprint(got) != "[-64 32 0 2]" || p.Scale[0] != 0.03125 || p.colSum[0] != -30 {
		t.Errorf("weights: %v scale %v sum %d, want [-64 32 0 2] 0.03125 -30", got, p.Scale[0], p.colSum[0])
	}
}

// TestInt8PanelExtremes: Int8Linear's panel kernel, which multiplies the
// quantized bytes as they are, gives the definition's bits where every
// pair of products is as large as it gets: activations 255 (and 0) times
// weights ±Int8WeightMax, 2·255·64 = 32,640 in an int16 pair. With 8-bit
// weights (±127) VPMADDUBSW would saturate these at 32,767.
func TestInt8PanelExtremes(t *testing.T) {
	const m, n, k = 9, 32, 64
	x, w := make([]float32, m*k), make([]float32, n*k)
	for i := range x {
		x[i] = 1 // a row of ones quantizes to 255
		if i/k%3 == 1 && i%2 == 1 {
			x[i] = -1 // 0 and 255 alternating
		}
	}
	for i := range w {
		w[i] = 1
		if i/k%2 == 1 {
			w[i] = -1
		}
	}
	want := int8LinearRef(x, m, k, w, n, nil)
	got := make([]float32, m*n)
	Int8Linear(got, n, x, k, m, QuantizeInt8(w, n, k, k), nil)
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s: y[%d] = %v, definition %v", Int8ISA(), i, got[i], want[i])
		}
	}
}

// TestInt8Digest pins Int8Linear's bits on a fixed product, the same on
// every kernel and CPU: the int32 sums are exact and the float32 steps one
// defined sequence.
func TestInt8Digest(t *testing.T) {
	const m, n, k = 197, 72, 384
	r := rand.New(rand.NewPCG(7, 8))
	x, w, b := randFloats(r, m*k, 1), randFloats(r, n*k, 0.05), randFloats(r, n, 0.1)
	saved := hasAVX2
	defer func() { hasAVX2 = saved }()
	for _, impl := range []bool{saved, false} {
		hasAVX2 = impl
		y := make([]float32, m*n)
		Int8Linear(y, n, x, k, m, QuantizeInt8(w, n, k, k), b)
		h := sha256.New()
		binary.Write(h, binary.LittleEndian, y)
		if got, want := fmt.Sprintf("%x", h.Sum(nil)), int8Digest; got != want {
			t.Errorf("%s: digest %s, want %s", Int8ISA(), got, want)
		}
	}
}

const int8Digest = "4cdaf7e5a874db7ce7c014e87e7dcc19518322a6585355e5066ff7c38f702d8e"

// BenchmarkInt8Linear times ViT-S/16's products at one image (197 tokens)
// in int8 and, for comparison, in float32 (Sgemm).
func BenchmarkInt8Linear(b *testing.B) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, sh := range [][3]int{{197, 1152, 384}, {197, 1536, 384}, {197, 384, 1536}, {1, 1536, 384}, {1, 384, 1536}} {
		m, n, k := sh[0], sh[1], sh[2]
		x, w := randFloats(r, m*k, 1), randFloats(r, n*k, 0.05)
		y := make([]float32, m*n)
		p := QuantizeInt8(w, n, k, k)
		b.Run(fmt.Sprintf("int8/%dx%dx%d", m, n, k), func(b *testing.B) {
			b.SetBytes(int64(2 * m * n * k)) // "bytes" = flops
			for range b.N {
				Int8Linear(y, n, x, k, m, p, nil)
			}
		})
		b.Run(fmt.Sprintf("fp32/%dx%dx%d", m, n, k), func(b *testing.B) {
			b.SetBytes(int64(2 * m * n * k))
			for range b.N {
				Sgemm(false, true, m, n, k, 1, x, k, w, k, 0, y, n)
			}
		})
	}
}

// TestInt8QuantizeSameOnEveryKernel: the AVX2 range scan and quantization
// give the Go code's bytes, scales and zero points, on rows with ties,
// values at the range's ends, signed zeros and non-finite values.
func TestInt8QuantizeSameOnEveryKernel(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	saved := hasAVX2
	defer func() { hasAVX2 = saved }()
	for n := 1; n <= 70; n++ {
		for trial := 0; trial < 6; trial++ {
			x := randFloats(r, n, math.Pow(10, float64(trial-3)))
			switch trial {
			case 1:
				for i := range x {
					x[i] = float32(r.IntN(511)-255) / 2 // ties at scale 1
				}
				x[0] = 255
			case 2:
				x[r.IntN(n)] = float32(math.Copysign(0, -1))
			case 3:
				x[r.IntN(n)] = float32(math.Inf(-1))
			case 4:
				x[r.IntN(n)] = float32(math.NaN())
			}
			kp := (n + 3) &^ 3
			var q [2][]uint8
			var s [2]float32
			var z [2]int32
			for i, impl := range []bool{saved, false} {
				hasAVX2 = impl
				q[i] = make([]uint8, kp)
				sc, zp := make([]float32, 1), make([]int32, 1)
				QuantizeRowsUint8(q[i], kp, sc, zp, x, n, 1, n)
				s[i], z[i] = sc[0], zp[0]
			}
			if fmt.Sprint(q[0]) != fmt.Sprint(q[1]) || math.Float32bits(s[0]) != math.Float32bits(s[1]) || z[0] != z[1] {
				t.Fatalf("n %d trial %d: %v %v %d, Go %v %v %d", n, trial, q[0], s[0], z[0], q[1], s[1], z[1])
			}
		}
	}
}
