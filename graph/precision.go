package graph

import (
	"fmt"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/internal/enum"
)

// Precision names the arithmetic of an op's matrix products. It is a
// property of each op, given when the op is built (WithPrecision, or
// PackWeight's for the packed Linear ops); the layers builder passes the
// graph's (layers.BuildOptions.Precision) to every product it adds.
//
// BF16 has torch autocast's semantics on a CPU: the operands of a product
// are rounded to bfloat16 (round to nearest even) and the products
// accumulate in float32 (kernels.SgemmBF16). It applies to the products
// only: Linear's forward, dX and dW; Attention's Q·Kᵀ and P·V and their
// gradients; the patch projection (a Linear). Everything else stays float32:
// the tensors themselves (weights, activations, gradients), the bias
// additions, LayerNorm, softmax, GELU, the loss and every reduction. The
// one exception is an activation whose only readers are bfloat16 products
// (StoreBF16): it may be kept as the bfloat16 words those products would
// round it to, which changes no bit of any result.
type Precision string

// The precisions. The zero value "" means FP32.
const (
	FP32 Precision = "fp32" // float32 products (kernels.Sgemm)
	BF16 Precision = "bf16" // bfloat16 operands, float32 accumulation (kernels.SgemmBF16)
	INT8 Precision = "int8" // inference only: int8 weights and activations, int32 accumulation (kernels.Int8Linear)
)

// INT8 is dynamic quantization as ONNX Runtime's quantize_dynamic does it
// with reduce_range, for inference: the Linear weights packed by PackWeight
// are quantized once to 7-bit integers (symmetric per output channel,
// −64…64, kernels.Int8WeightMax), each row of a packed Linear's
// input is quantized to uint8 when it arrives (its own scale and zero
// point), and the products accumulate in int32 (kernels.Int8Linear).
// Everything else is float32, attention's Q·Kᵀ and P·V included. Only
// PackWeight and the graphs that read packed weights (layers' Frozen
// graphs) take it; every other op refuses it, and training has no int8.

// Validate reports whether p is a precision ("" = fp32).
func (p Precision) Validate() error { return enum.Check(p, FP32, BF16, INT8) }

// IsInt8 reports whether p is INT8.
func (p Precision) IsInt8() bool { return p == INT8 }

// IsBF16 reports whether p is BF16.
func (p Precision) IsBF16() bool { return p == BF16 }

// OrDefault returns p, or FP32 when p is "".
func (p Precision) OrDefault() Precision {
	if p == "" {
		return FP32
	}
	return p
}

// String returns p as written ("" for the unset default).
func (p Precision) String() string { return string(p) }

// Set parses a command-line value (flag.Value): p becomes s when s is a
// precision, and is left as it was otherwise (an empty value included: a
// flag given is a choice). The error is an *enum.Error.
func (p *Precision) Set(s string) error {
	v := Precision(s)
	if s == "" {
		return &enum.Error{Got: s, Want: []string{string(FP32), string(BF16), string(INT8)}}
	}
	if err := v.Validate(); err != nil {
		return err
	}
	*p = v
	return nil
}

// OpOption sets an optional property of an op at construction.
type OpOption func(*opOptions)

type opOptions struct {
	precision Precision
	words     bool // StoreBF16
	recompute bool // Recompute
}

// StoreBF16 keeps the op's output as bfloat16 words: a tensor of dtype
// Uint16 holding kernels.ToBF16 of each float32 value, half the memory.
// It is for an output whose only readers are bfloat16 products (a Linear
// of precision BF16 takes such an input): they read the words as they
// would have rounded the float32 values, so every result keeps its bits.
// Ops that offer it say so (GELU); float64 outputs refuse it.
func StoreBF16() OpOption {
	return func(o *opOptions) { o.words = true }
}

// storesBF16 reports whether opts ask for StoreBF16, refusing it on an
// output of dtype dt other than float32.
func storesBF16(op string, dt tensor.Dtype, opts []OpOption) (bool, error) {
	var o opOptions
	for _, f := range opts {
		f(&o)
	}
	if o.words && dt != tensor.Float32 {
		return false, fmt.Errorf("%s: StoreBF16 needs a float32 output, got %v", op, dt)
	}
	return o.words, nil
}

// WithPrecision builds the op's matrix products in precision p (default
// FP32). BF16 needs float32 operands: an op of float64 inputs refuses it.
func WithPrecision(p Precision) OpOption {
	return func(o *opOptions) { o.precision = p }
}

// PrecisionOf is the precision opts set ("" when none does).
func PrecisionOf(opts ...OpOption) Precision {
	var o opOptions
	for _, f := range opts {
		f(&o)
	}
	return o.precision
}

// PrecisionError is an op refusing its precision: an unknown value, BF16
// on float64 operands, or INT8 on an op other than the packed Linear.
type PrecisionError struct {
	Op        string
	Precision Precision
	Dtype     tensor.Dtype
	Err       error // the enum.Error of an unknown value; nil otherwise
}

func (e *PrecisionError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: precision %v", e.Op, e.Err)
	}
	if e.Precision.IsInt8() && e.Dtype == tensor.Float32 {
		return fmt.Sprintf("%s: precision %s is for inference on packed weights (PackWeight) only", e.Op, e.Precision)
	}
	return fmt.Sprintf("%s: precision %s needs float32 operands, got %v", e.Op, e.Precision, e.Dtype)
}

func (e *PrecisionError) Unwrap() error { return e.Err }

// bf16Of applies opts and reports whether op's products are bfloat16 ones,
// refusing an unknown precision and BF16 on operands of dtype dt other than
// float32.
func bf16Of(op string, dt tensor.Dtype, opts []OpOption) (bool, error) {
	p := PrecisionOf(opts...)
	if err := p.Validate(); err != nil {
		return false, &PrecisionError{Op: op, Precision: p, Dtype: dt, Err: err}
	}
	if p.IsInt8() {
		return false, &PrecisionError{Op: op, Precision: p, Dtype: dt}
	}
	if !p.IsBF16() {
		return false, nil
	}
	if dt != tensor.Float32 {
		return false, &PrecisionError{Op: op, Precision: p, Dtype: dt}
	}
	return true, nil
}

// wordsTag is what WriteHash adds for an op reading or writing bfloat16
// words ("" otherwise).
func wordsTag(words bool) string {
	if words {
		return ",words"
	}
	return ""
}

// precisionTag is what WriteHash adds for a bfloat16 op ("" for float32,
// so float32 ops hash as before).
func precisionTag(bf16 bool) string {
	if bf16 {
		return ",bf16"
	}
	return ""
}

// packedTag is what a packed Linear's WriteHash adds for its weight's
// precision ("" for fp32).
func packedTag(p Precision) string {
	if p == FP32 {
		return ""
	}
	return "," + string(p)
}
