package safetensors

import "fmt"

// DType is an element type as spelled in the safetensors header ("F32", "BF16", ...).
type DType string

// The element types of the safetensors format. All are little-endian.
const (
	F64    DType = "F64"     // IEEE 754 binary64
	F32    DType = "F32"     // IEEE 754 binary32
	F16    DType = "F16"     // IEEE 754 binary16
	BF16   DType = "BF16"    // bfloat16: the top 16 bits of a binary32
	F8E4M3 DType = "F8_E4M3" // 8-bit float, 4 exponent bits (stored and read, not converted)
	F8E5M2 DType = "F8_E5M2" // 8-bit float, 5 exponent bits (stored and read, not converted)
	I64    DType = "I64"
	I32    DType = "I32"
	I16    DType = "I16"
	I8     DType = "I8"
	U64    DType = "U64"
	U32    DType = "U32"
	U16    DType = "U16"
	U8     DType = "U8"
	Bool   DType = "BOOL" // one byte per element
)

var dtypeSizes = map[DType]int{
	F64: 8, F32: 4, F16: 2, BF16: 2, F8E4M3: 1, F8E5M2: 1,
	I64: 8, I32: 4, I16: 2, I8: 1,
	U64: 8, U32: 4, U16: 2, U8: 1,
	Bool: 1,
}

// Size returns the number of bytes of one element, or 0 for an unknown dtype.
func (d DType) Size() int { return dtypeSizes[d] }

// Validate reports whether d is one of the dtypes this package knows.
func (d DType) Validate() error {
	if d.Size() == 0 {
		return fmt.Errorf("unknown dtype %q", string(d))
	}
	return nil
}
