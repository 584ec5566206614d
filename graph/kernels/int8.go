package kernels

import (
	"fmt"
	"math"
)

// Int8 products follow ONNX Runtime's dynamic quantization
// (quantize_dynamic with reduce_range, which ONNX Runtime advises on x86-64
// without VNNI): the weights are quantized once, symmetric per output
// channel to −64…64 (7 bits); each activation row is quantized when it
// arrives to 0…255, asymmetric with its own scale and zero point; the
// products accumulate in int32 and are scaled back to float32.
//
// AVX2's VPMADDUBSW multiplies unsigned bytes by signed ones and adds
// pairs in int16 with saturation: with 7-bit weights a pair is at most
// 2·255·64 = 32,640 ≤ 32,767, so the panel kernel multiplies the quantized
// bytes as they are and never saturates (8-bit weights would overflow it);
// it takes four rows at a time, and a row at a time for the one to three
// rows past a row block's last four. The tile for the columns left over (a
// panel narrower than 16) sums (a − 128)·w with
// a − 128's sign moved onto w, the same integers. Every kernel — AVX2 and
// the Go code — thus gives the same int32 sums exactly. The float32 steps
// around the sums are one defined sequence (no fused multiply-add), so int8
// outputs are the same bits on every CPU.

// Int8WeightMax is the largest weight magnitude after quantization: 7 bits,
// reduce_range's −64…64, so that AVX2's VPMADDUBSW pairs never saturate.
const Int8WeightMax = 64

// int8Group is the depth of one VPMADDUBSW/VPMADDWD step: the packed
// weights hold 4 consecutive depths of a column in 4 bytes.
const int8Group = 4

// int8Panel is the number of output columns in one packed panel (two
// 8-lane int32 registers).
const int8Panel = 16

// PackedInt8 is a weight matrix W (N outputs × K inputs, PyTorch's
// [out, in]) quantized for Int8Linear: per output channel j a scale
// Scale[j] = max|W[j,:]| / Int8WeightMax and the integers
// q = round(W[j,k] / Scale[j]) in −64…64 (to nearest, ties to even), laid
// out in panels of 16 columns and groups of 4 depths, with the column sums
// of q that the activations' zero points need.
type PackedInt8 struct {
	K, N   int
	kp     int       // K rounded up to int8Group
	data   []int8    // [ceil(N/16)][kp/4][16][4]
	Scale  []float32 // per output channel
	colSum []int32   // Σ_k q[j,k]
	finite []bool    // false where row j of W held a NaN or an infinity
}

// Bytes is the memory the packed weights hold (the integers, their scales
// and column sums).
func (p *PackedInt8) Bytes() int64 {
	return int64(len(p.data)) + 4*int64(len(p.Scale)+len(p.colSum)) + int64(len(p.finite))
}

// QuantizeInt8 quantizes w, N rows of K float32 values (row stride ldw),
// for Int8Linear. A row holding a NaN or an infinity makes its output
// channel NaN.
func QuantizeInt8(w []float32, n, k, ldw int) *PackedInt8 {
	if n < 0 || k < 0 || ldw < max(k, 1) {
		panic(fmt.Sprintf("kernels.QuantizeInt8: n %d, k %d, ldw %d", n, k, ldw))
	}
	if n > 0 && len(w) < (n-1)*ldw+k {
		panic(fmt.Sprintf("kernels.QuantizeInt8: len(w) %d < %d", len(w), (n-1)*ldw+k))
	}
	kp := (k + int8Group - 1) / int8Group * int8Group
	panels := (n + int8Panel - 1) / int8Panel
	p := &PackedInt8{K: k, N: n, kp: kp, data: make([]int8, panels*kp*int8Panel),
		Scale: make([]float32, n), colSum: make([]int32, n), finite: make([]bool, n)}
	for j := 0; j < n; j++ {
		row := w[j*ldw : j*ldw+k]
		amax, finite := float32(0), true
		for _, v := range row {
			if v != v || math.IsInf(float64(v), 0) {
				finite = false
				break
			}
			amax = max(amax, float32(math.Abs(float64(v))))
		}
		p.finite[j] = finite
		if !finite || amax == 0 {
			p.Scale[j] = 1
			if !finite {
				p.Scale[j] = float32(math.NaN())
			}
			continue
		}
		scale := amax / Int8WeightMax
		p.Scale[j] = scale
		panel := p.data[j/int8Panel*kp*int8Panel:]
		col := j % int8Panel
		var sum int32
		for d, v := range row {
			q := int32(math.RoundToEven(float64(v / scale)))
			q = min(max(q, -Int8WeightMax), Int8WeightMax)
			panel[d/int8Group*int8Panel*int8Group+col*int8Group+d%int8Group] = int8(q)
			sum += q
		}
		p.colSum[j] = sum
	}
	return p
}

// QuantizeRowsUint8 quantizes m rows of k float32 values (row stride lds)
// as ONNX Runtime's DynamicQuantizeLinear does a tensor, but per row: the
// row's range widened to hold 0, [lo, hi], maps onto 0…255 with
// scale = (hi − lo) / 255 and zero point zp = round(−lo / scale), and
// q = clamp(round(x / scale) + zp, 0, 255), rounding to nearest, ties to
// even. A row of zeros has scale 1 and zero point 0; a row holding a NaN or
// an infinity gets scale NaN, so its outputs are NaN. dst has row stride
// ldd ≥ k rounded up to 4; the padding is set to 0.
func QuantizeRowsUint8(dst []uint8, ldd int, scale []float32, zero []int32, src []float32, lds, m, k int) {
	kp := (k + int8Group - 1) / int8Group * int8Group
	if ldd < kp || lds < k || len(scale) < m || len(zero) < m {
		panic(fmt.Sprintf("kernels.QuantizeRowsUint8: ldd %d (want ≥ %d), lds %d, m %d, k %d", ldd, kp, lds, m, k))
	}
	if m > 0 && (len(dst) < (m-1)*ldd+kp || len(src) < (m-1)*lds+k) {
		panic(fmt.Sprintf("kernels.QuantizeRowsUint8: len(dst) %d, len(src) %d for %d rows", len(dst), len(src), m))
	}
	for i := 0; i < m; i++ {
		x, q := src[i*lds:i*lds+k], dst[i*ldd:i*ldd+kp]
		scale[i], zero[i] = quantizeRow(q, x)
	}
}

// quantizeRow quantizes x into q (len(q) ≥ len(x); the rest set to 0) and
// returns the row's scale and zero point.
func quantizeRow(q []uint8, x []float32) (float32, int32) {
	lo, hi, finite := rowRange(x)
	if !finite {
		clear(q)
		return float32(math.NaN()), 0
	}
	clear(q[len(x):])
	if hi == lo { // all zeros
		clear(q[:len(x)])
		return 1, 0
	}
	scale := float32(hi-lo) / 255
	if scale == 0 || math.IsInf(float64(scale), 0) {
		// hi − lo is a subnormal below 255 ulps, or overflows float32:
		// compute the scale from each end instead.
		scale = hi/255 - lo/255
	}
	zp := int32(math.RoundToEven(float64(-lo / scale)))
	zp = min(max(zp, 0), 255)
	quantizeValues(q[:len(x)], x, scale, zp)
	return scale, zp
}

// rowRangeGo extends [lo, hi] over x and reports whether every value of x
// is finite.
func rowRangeGo(x []float32, lo, hi float32) (float32, float32, bool) {
	for _, v := range x {
		if v != v || math.IsInf(float64(v), 0) {
			return 0, 0, false
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	return lo, hi, true
}

// quantizeValuesGo sets q[d] = clamp(round(x[d] / scale) + zp, 0, 255),
// rounding to nearest, ties to even (VCVTPS2DQ's rounding).
func quantizeValuesGo(q []uint8, x []float32, scale float32, zp int32) {
	for d, v := range x {
		t := int32(math.RoundToEven(float64(v/scale))) + zp
		q[d] = uint8(min(max(t, 0), 255))
	}
}
