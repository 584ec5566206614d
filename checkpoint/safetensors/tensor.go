package safetensors

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"
)

// Tensor is one named tensor of a safetensors file: its dtype, its shape
// (row-major, outermost first; empty for a scalar) and its raw little-endian
// bytes, len(Data) = product(Shape) × DType.Size().
type Tensor struct {
	Name  string
	DType DType
	Shape []int
	Data  []byte
}

// FromFloat32 returns an F32 tensor holding a little-endian copy of v.
// It does not check that len(v) matches shape; Encode and Write do, and
// reject the tensor by name if not.
func FromFloat32(name string, shape []int, v []float32) Tensor {
	data := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(x))
	}
	return Tensor{Name: name, DType: F32, Shape: append([]int{}, shape...), Data: data}
}

// Float32View returns an F32 tensor whose Data is v's own memory on a
// little-endian machine (amd64, arm64, …): no copy is made, so a checkpoint
// of N parameters does not need another 4·N bytes while it is written. The
// caller must leave v unchanged until the tensor has been encoded. On a
// big-endian machine it returns [FromFloat32]'s copy.
func Float32View(name string, shape []int, v []float32) Tensor {
	if !littleEndian || len(v) == 0 {
		return FromFloat32(name, shape, v)
	}
	data := unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v))
	return Tensor{Name: name, DType: F32, Shape: append([]int{}, shape...), Data: data}
}

// littleEndian is true when this machine stores a uint32's low byte first,
// the byte order safetensors files use.
var littleEndian = func() bool {
	x := uint32(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// NumElements returns product(Shape), 1 for a scalar.
func (t Tensor) NumElements() (int, error) {
	return numElements(t.Shape)
}

// Float32 decodes the tensor as float32 values in row-major order. F32 is
// copied; F16, BF16 and F64 are converted (F64 rounds to nearest even, and
// values beyond the float32 range become ±Inf). Integer, BOOL and 8-bit float
// tensors are an error rather than a silent conversion: read their Data directly.
func (t Tensor) Float32() ([]float32, error) {
	n, err := t.byteLen()
	if err != nil {
		return nil, fmt.Errorf("tensor %q: %w", t.Name, err)
	}
	if len(t.Data) != n {
		return nil, fmt.Errorf("tensor %q: shape %v with dtype %s needs %d bytes, has %d", t.Name, t.Shape, t.DType, n, len(t.Data))
	}
	d := t.Data
	switch t.DType {
	case F32:
		out := make([]float32, len(d)/4)
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(d[4*i:]))
		}
		return out, nil
	case F64:
		out := make([]float32, len(d)/8)
		for i := range out {
			out[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(d[8*i:])))
		}
		return out, nil
	case F16:
		out := make([]float32, len(d)/2)
		for i := range out {
			out[i] = float16ToFloat32(binary.LittleEndian.Uint16(d[2*i:]))
		}
		return out, nil
	case BF16:
		out := make([]float32, len(d)/2)
		for i := range out {
			out[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(d[2*i:])) << 16)
		}
		return out, nil
	}
	return nil, fmt.Errorf("tensor %q: dtype %s is not F32, F64, F16 or BF16; cannot convert to float32", t.Name, t.DType)
}

// float16ToFloat32 widens an IEEE 754 binary16 value exactly (a signalling
// NaN becomes the quiet NaN with its payload, as IEEE 754 conversions do).
func float16ToFloat32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f && mant == 0: // ±Inf
		return math.Float32frombits(sign | 0x7f800000)
	case exp == 0x1f: // NaN: the payload kept, quietened as F16C's vcvtph2ps and torch do
		return math.Float32frombits(sign | 0x7fc00000 | mant<<13)
	case exp == 0 && mant == 0: // ±0
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: mant × 2⁻²⁴, exact in float32
		v := float32(mant) * (1.0 / (1 << 24))
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
}

// byteLen returns product(Shape) × DType.Size(), checking the dtype, the
// dims and overflow.
func (t Tensor) byteLen() (int, error) {
	if err := t.DType.Validate(); err != nil {
		return 0, err
	}
	n, err := numElements(t.Shape)
	if err != nil {
		return 0, err
	}
	size := t.DType.Size()
	if n > math.MaxInt/size {
		return 0, fmt.Errorf("shape %v with dtype %s: byte length overflows", t.Shape, t.DType)
	}
	return n * size, nil
}

// numElements returns the product of shape, rejecting negative dims and overflow.
func numElements(shape []int) (int, error) {
	for _, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("shape %v has a negative dim", shape)
		}
		if d == 0 {
			return 0, nil
		}
	}
	n := 1
	for _, d := range shape {
		if n > math.MaxInt/d {
			return 0, fmt.Errorf("shape %v: element count overflows", shape)
		}
		n *= d
	}
	return n, nil
}
