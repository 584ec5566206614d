package kernels

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// lnForward64 is the float64 reference of LayerNormRows.
func lnForward64(x, w, b []float64, rows, cols int, eps float64) (y, mean, rstd []float64) {
	y, mean, rstd = make([]float64, rows*cols), make([]float64, rows), make([]float64, rows)
	for r := 0; r < rows; r++ {
		row := x[r*cols : (r+1)*cols]
		m := 0.0
		for _, v := range row {
			m += v
		}
		m /= float64(cols)
		v := 0.0
		for _, e := range row {
			v += (e - m) * (e - m)
		}
		v /= float64(cols)
		rs := 1 / math.Sqrt(v+eps)
		mean[r], rstd[r] = m, rs
		for c, e := range row {
			y[r*cols+c] = (e-m)*rs*w[c] + b[c]
		}
	}
	return
}

// lnBackward64 is the float64 reference of LayerNormBackwardRows.
func lnBackward64(dy, x, w []float64, mean, rstd []float64, rows, cols int) (dx, dw, db []float64) {
	dx, dw, db = make([]float64, rows*cols), make([]float64, cols), make([]float64, cols)
	for r := 0; r < rows; r++ {
		var sg, sgx float64
		for c := 0; c < cols; c++ {
			o := r*cols + c
			xh := (x[o] - mean[r]) * rstd[r]
			g := dy[o] * w[c]
			sg += g
			sgx += g * xh
			dw[c] += dy[o] * xh
			db[c] += dy[o]
		}
		sg /= float64(cols)
		sgx /= float64(cols)
		for c := 0; c < cols; c++ {
			o := r*cols + c
			xh := (x[o] - mean[r]) * rstd[r]
			dx[o] = rstd[r] * (dy[o]*w[c] - sg - xh*sgx)
		}
	}
	return
}

func to64(s []float32) []float64 {
	d := make([]float64, len(s))
	for i, v := range s {
		d[i] = float64(v)
	}
	return d
}

// TestLayerNormBackwardReference checks the float64 reference backward
// against central differences of the float64 forward, so the formula the
// kernels are compared with is itself right.
func TestLayerNormBackwardReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 5))
	rows, cols := 3, 5
	x, w, b, dy := make([]float64, rows*cols), make([]float64, cols), make([]float64, cols), make([]float64, rows*cols)
	for i := range x {
		x[i], dy[i] = r.NormFloat64(), r.NormFloat64()
	}
	for i := range w {
		w[i], b[i] = r.NormFloat64(), r.NormFloat64()
	}
	loss := func() float64 {
		y, _, _ := lnForward64(x, w, b, rows, cols, 1e-5)
		s := 0.0
		for i := range y {
			s += y[i] * dy[i]
		}
		return s
	}
	_, mean, rstd := lnForward64(x, w, b, rows, cols, 1e-5)
	dx, dw, db := lnBackward64(dy, x, w, mean, rstd, rows, cols)
	const h = 1e-6
	for _, p := range []struct {
		name string
		v    []float64
		grad []float64
	}{{"x", x, dx}, {"w", w, dw}, {"b", b, db}} {
		for i := range p.v {
			old := p.v[i]
			p.v[i] = old + h
			up := loss()
			p.v[i] = old - h
			down := loss()
			p.v[i] = old
			if fd := (up - down) / (2 * h); math.Abs(fd-p.grad[i]) > 1e-6*(1+math.Abs(fd)) {
				t.Errorf("d%s[%d] = %g, finite difference %g", p.name, i, p.grad[i], fd)
			}
		}
	}
}

func TestLayerNormRows(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 5))
	withImpls(t, func(t *testing.T) {
		for _, shape := range [][2]int{{1, 1}, {2, 3}, {4, 7}, {3, 64}, {5, 77}, {700, 192}} {
			rows, cols := shape[0], shape[1]
			x, w, b, dy := make([]float32, rows*cols), randSlice(r, cols), randSlice(r, cols), randSlice(r, rows*cols)
			for i := range x {
				x[i] = float32(r.NormFloat64()*3 + 2) // a non-zero mean
			}
			const eps = 1e-6
			y, mean, rstd := make([]float32, rows*cols), make([]float32, rows), make([]float32, rows)
			LayerNormRows(y, mean, rstd, x, w, b, rows, cols, eps)
			// The words variant: ToBF16 of the same values, the same statistics.
			yw, meanW, rstdW := make([]uint16, rows*cols), make([]float32, rows), make([]float32, rows)
			LayerNormRowsWords(yw, meanW, rstdW, x, w, b, rows, cols, eps)
			if firstDiff(mean, meanW) >= 0 || firstDiff(rstd, rstdW) >= 0 {
				t.Fatalf("%dx%d: LayerNormRowsWords' statistics differ from LayerNormRows'", rows, cols)
			}
			for i, v := range y {
				if yw[i] != ToBF16(v) {
					t.Fatalf("%dx%d: LayerNormRowsWords y[%d] = %#04x, want ToBF16(%g) = %#04x", rows, cols, i, yw[i], v, ToBF16(v))
				}
			}
			y64, mean64, rstd64 := lnForward64(to64(x), to64(w), to64(b), rows, cols, eps)
			for i := 0; i < rows; i++ {
				if math.Abs(float64(mean[i])-mean64[i]) > 1e-6*(1+math.Abs(mean64[i])) ||
					math.Abs(float64(rstd[i])-rstd64[i]) > 2e-6*rstd64[i] {
					t.Fatalf("%dx%d: row %d mean %g rstd %g, want %g %g", rows, cols, i, mean[i], rstd[i], mean64[i], rstd64[i])
				}
			}
			for i := range y {
				// x − mean cancels: the error scales with |x| + |mean|.
				scale := (math.Abs(float64(x[i]))+math.Abs(mean64[i/cols]))*rstd64[i/cols]*math.Abs(float64(w[i%cols])) + math.Abs(float64(b[i%cols]))
				if math.Abs(float64(y[i])-y64[i]) > 2e-6*scale {
					t.Fatalf("%dx%d: y[%d] = %g, want %g", rows, cols, i, y[i], y64[i])
				}
			}
			// Backward, with dw and db accumulating onto non-zero values.
			dx := make([]float32, rows*cols)
			dw, db := randSlice(r, cols), randSlice(r, cols)
			dw0, db0 := to64(dw), to64(db)
			LayerNormBackwardRows(dx, dw, db, dy, x, mean, rstd, w, rows, cols)
			dx64, dw64, db64 := lnBackward64(to64(dy), to64(x), to64(w), mean64, rstd64, rows, cols)
			var dxScale float64
			for i := range dx64 {
				dxScale = max(dxScale, math.Abs(dx64[i]))
			}
			for i := range dx {
				if math.Abs(float64(dx[i])-dx64[i]) > 1e-5*dxScale {
					t.Fatalf("%dx%d: dx[%d] = %g, want %g", rows, cols, i, dx[i], dx64[i])
				}
			}
			tol := 1e-5 * math.Sqrt(float64(rows)) * 4
			for c := 0; c < cols; c++ {
				if math.Abs(float64(dw[c])-(dw0[c]+dw64[c])) > tol || math.Abs(float64(db[c])-(db0[c]+db64[c])) > tol {
					t.Fatalf("%dx%d: dw[%d] %g db %g, want %g %g", rows, cols, c, dw[c], db[c], dw0[c]+dw64[c], db0[c]+db64[c])
				}
			}
		}
	})
}

// TestLayerNormNoAffine checks nil w and b (ones and zeros) and nil dw, db.
func TestLayerNormNoAffine(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	rows, cols := 3, 10
	x, dy := randSlice(r, rows*cols), randSlice(r, rows*cols)
	ones, zeros := make([]float32, cols), make([]float32, cols)
	for i := range ones {
		ones[i] = 1
	}
	y1, y2 := make([]float32, rows*cols), make([]float32, rows*cols)
	m, rs := make([]float32, rows), make([]float32, rows)
	LayerNormRows(y1, m, rs, x, nil, nil, rows, cols, 1e-5)
	LayerNormRows(y2, m, rs, x, ones, zeros, rows, cols, 1e-5)
	dx1, dx2 := make([]float32, rows*cols), make([]float32, rows*cols)
	LayerNormBackwardRows(dx1, nil, nil, dy, x, m, rs, nil, rows, cols)
	LayerNormBackwardRows(dx2, make([]float32, cols), make([]float32, cols), dy, x, m, rs, ones, rows, cols)
	for i := range y1 {
		if y1[i] != y2[i] || dx1[i] != dx2[i] {
			t.Fatalf("[%d]: nil affine y %g dx %g, explicit %g %g", i, y1[i], dx1[i], y2[i], dx2[i])
		}
	}
}

// TestLayerNormBackwardRowsAdd: the fused residual add gives dx + res bit
// for bit, and the same dw and db, as the plain kernel and a separate add.
func TestLayerNormBackwardRowsAdd(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	withImpls(t, func(t *testing.T) {
		for _, shape := range [][2]int{{1, 1}, {4, 7}, {700, 192}} {
			rows, cols := shape[0], shape[1]
			x, w, dy, res := randSlice(r, rows*cols), randSlice(r, cols), randSlice(r, rows*cols), randSlice(r, rows*cols)
			mean, rstd := make([]float32, rows), make([]float32, rows)
			LayerNormRows(make([]float32, rows*cols), mean, rstd, x, w, nil, rows, cols, 1e-6)
			want, wdw, wdb := make([]float32, rows*cols), make([]float32, cols), make([]float32, cols)
			LayerNormBackwardRows(want, wdw, wdb, dy, x, mean, rstd, w, rows, cols)
			for i := range want {
				want[i] += res[i]
			}
			got, dw, db := make([]float32, rows*cols), make([]float32, cols), make([]float32, cols)
			LayerNormBackwardRowsAdd(got, dw, db, dy, x, mean, rstd, w, res, rows, cols)
			for _, c := range []struct {
				name      string
				got, want []float32
			}{{"dx", got, want}, {"dw", dw, wdw}, {"db", db, wdb}} {
				for i := range c.want {
					if math.Float32bits(c.got[i]) != math.Float32bits(c.want[i]) {
						t.Fatalf("%dx%d: %s[%d] = %v, want %v", rows, cols, c.name, i, c.got[i], c.want[i])
					}
				}
			}
		}
	})
}

// TestLayerNormBackwardAcrossCores checks that dx, dw and db are the same
// bits on 1, 2, 3 and 16 cores, for shapes of one and of many row chunks
// (dw and db are reduceRows' sums, added in chunk order).
func TestLayerNormBackwardAcrossCores(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 11))
	for _, shape := range [][2]int{{6400, 64}, {700, 384}, {30, 8}} {
		rows, cols := shape[0], shape[1]
		x, w, dy := randSlice(r, rows*cols), randSlice(r, cols), randSlice(r, rows*cols)
		mean, rstd := make([]float32, rows), make([]float32, rows)
		LayerNormRows(make([]float32, rows*cols), mean, rstd, x, w, nil, rows, cols, 1e-6)
		run := func(procs int) [3][]float32 {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			dx, dw, db := make([]float32, rows*cols), make([]float32, cols), make([]float32, cols)
			LayerNormBackwardRows(dx, dw, db, dy, x, mean, rstd, w, rows, cols)
			return [3][]float32{dx, dw, db}
		}
		want := run(1)
		for _, procs := range []int{2, 3, 16} {
			got := run(procs)
			for k, name := range []string{"dx", "dw", "db"} {
				for i := range want[k] {
					if math.Float32bits(got[k][i]) != math.Float32bits(want[k][i]) {
						t.Fatalf("%dx%d on %d cores: %s[%d] = %v, want %v (1 core)", rows, cols, procs, name, i, got[k][i], want[k][i])
					}
				}
			}
		}
	}
}
