package kernels

import (
	"fmt"
	"sync"
	"unsafe"
)

// int8RowBlock is the number of rows of quantized activations one task
// takes through every panel it owns: 64 rows of the widest depth (3,072)
// are 192 KiB, within a core's L2.
const int8RowBlock = 64

// int8Tile computes one 4×16 tile: for r < 4 and c < 16,
// tile[r*16+c] += Σ_{g<k4} Σ_{d<4} (a_r[4g+d] − 128) · b[g*64+c*4+d], where
// a_r is the row at a[r]. It reads 4·k4 bytes of each row and 64·k4 of b.
type int8TileFunc func(k4 int, a0, a1, a2, a3 *uint8, b *int8, tile *[64]int32)

// int8TileGo is the portable tile: the same integer sums as the assembly.
func int8TileGo(k4 int, a0, a1, a2, a3 *uint8, b *int8, tile *[64]int32) {
	rows := [4][]uint8{
		unsafeBytes(a0, 4*k4), unsafeBytes(a1, 4*k4), unsafeBytes(a2, 4*k4), unsafeBytes(a3, 4*k4),
	}
	bb := unsafeInt8s(b, 64*k4)
	for r, a := range rows {
		acc := (*[16]int32)(tile[r*16 : r*16+16])
		for g := 0; g < k4; g++ {
			a4 := a[4*g : 4*g+4 : 4*g+4]
			panel := bb[64*g : 64*g+64 : 64*g+64]
			for c := 0; c < 16; c++ {
				w := panel[4*c : 4*c+4 : 4*c+4]
				acc[c] += (int32(a4[0])-128)*int32(w[0]) + (int32(a4[1])-128)*int32(w[1]) +
					(int32(a4[2])-128)*int32(w[2]) + (int32(a4[3])-128)*int32(w[3])
			}
		}
	}
}

// Int8Linear computes y = x·Wᵀ + b, ONNX Runtime's dynamically quantized
// MatMul and Add, for m rows of x (w.K values each, row stride ldx) and the
// quantized weights w (QuantizeInt8): each row of x is quantized to uint8
// (QuantizeRowsUint8, scale sx[i] and zero point zx[i]), the products are
// summed in int32, and
//
//	y[i,j] = float32(acc[i,j] − zx[i]·Σ_k q[j,k]) · (sx[i]·w.Scale[j]) + b[j]
//
// where acc is Σ_k x_q[i,k]·q[j,k] (the tiles sum (x_q − 128)·q, and
// the zero point is taken as zx − 128: the same integer), each operation
// rounded to float32 in that order (no fused multiply-add;
// no addition when b is nil). The int32 sums are exact, so every kernel
// gives the same bits. y has row stride ldy; rows are split over the cores.
func Int8Linear(y []float32, ldy int, x []float32, ldx, m int, w *PackedInt8, b []float32) {
	Int8LinearThen(y, ldy, x, ldx, m, w, b, nil)
}

// Int8LinearThen is Int8Linear calling then(i0, i1, j0, j1) on each block
// of y it finishes (rows i0…i1−1, columns j0…j1−1), on the goroutine that
// computed it, while the block is in cache: a fused epilogue (a residual, an
// activation). then may be nil.
func Int8LinearThen(y []float32, ldy int, x []float32, ldx, m int, w *PackedInt8, b []float32, then func(i0, i1, j0, j1 int)) {
	n, k := w.N, w.K
	if m < 0 || ldx < max(k, 1) || ldy < max(n, 1) || (b != nil && len(b) < n) {
		panic(fmt.Sprintf("kernels.Int8Linear: m %d, ldx %d (k %d), ldy %d (n %d), len(b) %d", m, ldx, k, ldy, n, len(b)))
	}
	if m == 0 || n == 0 {
		return
	}
	if len(x) < (m-1)*ldx+k || len(y) < (m-1)*ldy+n {
		panic(fmt.Sprintf("kernels.Int8Linear: len(x) %d, len(y) %d for %d rows", len(x), len(y), m))
	}
	s := int8Scratch(m, w.kp)
	defer int8Pool.Put(s)
	qx, sx, zx := s.q, s.scale, s.zero
	blocks := (m + int8RowBlock - 1) / int8RowBlock
	parallelFor(blocks, 1, 1, func(lo, hi int) {
		r0, r1 := lo*int8RowBlock, min(hi*int8RowBlock, m)
		QuantizeRowsUint8(qx[r0*w.kp:], w.kp, sx[r0:r1], zx[r0:r1], x[r0*ldx:], ldx, r1-r0, k)
		for i := r0; i < r1; i++ {
			zx[i] -= 128 // the tiles sum (x_q − 128)·q
		}
	})
	panels := (n + int8Panel - 1) / int8Panel
	tile := bestInt8Tile()
	units := blocks * panels
	parallelFor(units, splitGrain(units, 4, 1), 1, func(lo, hi int) {
		var acc [64]int32
		// then runs once per run of a chunk's panels in one row block
		// (c0…c1 of rows r0…r1), not per 16-column panel: an activation or
		// a residual over 16 floats a call paid its call more than its work.
		run := int8Run{then: then}
		defer run.flush()
		for u := lo; u < hi; u++ {
			blk, p := u/panels, u%panels
			var bp *int8
			if w.kp > 0 {
				bp = &w.data[p*w.kp*int8Panel]
			}
			c0, c1 := p*int8Panel, min(p*int8Panel+int8Panel, n)
			r0, r1 := blk*int8RowBlock, min(blk*int8RowBlock+int8RowBlock, m)
			i := r0
			if c1-c0 == int8Panel && w.kp > 0 {
				i += int8PanelRows(y, ldy, qx, w.kp, sx, zx, w, p, c0, b, i, r1-i)
			}
			for ; i < r1; i += 4 {
				rows := min(4, r1-i)
				var a [4]*uint8
				for r := range a {
					a[r] = &qx[(i+min(r, rows-1))*w.kp]
				}
				acc = [64]int32{}
				if w.kp > 0 {
					tile(w.kp/int8Group, a[0], a[1], a[2], a[3], bp, &acc)
				}
				for r := 0; r < rows; r++ {
					int8Epilogue(y[(i+r)*ldy+c0:(i+r)*ldy+c1], acc[r*16:r*16+c1-c0], sx[i+r], zx[i+r], w, c0, b)
				}
			}
			run.add(r0, r1, c0, c1)
		}
	})
}

// int8Run gathers the blocks a chunk of Int8LinearThen finished, panel
// after panel, into runs of adjacent columns of the same rows, and calls
// then once per run.
type int8Run struct {
	then           func(i0, i1, j0, j1 int)
	r0, r1, c0, c1 int // the open run; empty when c0 == c1
}

// add extends the open run by the block rows r0…r1 × columns c0…c1, or
// flushes it and opens a new one if the block does not continue it.
func (r *int8Run) add(r0, r1, c0, c1 int) {
	if r.then == nil {
		return
	}
	if r.c0 < r.c1 && r.r0 == r0 && r.r1 == r1 && r.c1 == c0 {
		r.c1 = c1
		return
	}
	r.flush()
	r.r0, r.r1, r.c0, r.c1 = r0, r1, c0, c1
}

// flush calls then on the open run, if any.
func (r *int8Run) flush() {
	if r.then != nil && r.c0 < r.c1 {
		r.then(r.r0, r.r1, r.c0, r.c1)
	}
	r.c0, r.c1 = 0, 0
}

// int8Epilogue scales one row of a tile's sums back to float32 (see
// Int8Linear for the sequence of operations); zx is the row's zero point
// less 128, as the tiles' sums are of x_q − 128.
func int8Epilogue(y []float32, acc []int32, sx float32, zx int32, w *PackedInt8, c0 int, b []float32) {
	if int8Epilogue16(y, acc, sx, zx, w, c0, b) {
		return
	}
	for c := range y {
		j := c0 + c
		v := float32(acc[c] - zx*w.colSum[j])
		s := float32(sx * w.Scale[j])
		v = float32(v * s)
		if b != nil {
			v = float32(v + b[j])
		}
		y[c] = v
	}
}

type int8Buffers struct {
	q     []uint8
	scale []float32
	zero  []int32
}

var int8Pool sync.Pool

// int8Scratch returns buffers for m quantized rows of kp bytes.
func int8Scratch(m, kp int) *int8Buffers {
	s, _ := int8Pool.Get().(*int8Buffers)
	if s == nil {
		s = &int8Buffers{}
	}
	if cap(s.q) < m*kp {
		s.q = make([]uint8, m*kp)
	}
	if cap(s.scale) < m {
		s.scale, s.zero = make([]float32, m), make([]int32, m)
	}
	s.q, s.scale, s.zero = s.q[:m*kp], s.scale[:m], s.zero[:m]
	return s
}

func unsafeBytes(p *uint8, n int) []uint8 { return unsafe.Slice(p, n) }

func unsafeInt8s(p *int8, n int) []int8 { return unsafe.Slice(p, n) }
