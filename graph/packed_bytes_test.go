package graph

import (
	"testing"

	"gorgonia.org/tensor"
)

// TestPackedWeightBytes: a packed weight counts what it holds — the N·K
// values in its precision's width (bfloat16 emulated on float32 panels
// where the CPU has no bfloat16 products), plus at most a panel's padding
// and, for int8, a scale and a column sum per output channel.
func TestPackedWeightBytes(t *testing.T) {
	const n, k = 40, 30
	for _, tc := range []struct {
		dt     tensor.Dtype
		prec   Precision
		width  int64 // bytes per value
		most   int64 // bytes per value at most
		extra  int64 // bytes per output channel beyond the values
		padCol int64 // the widest padding of a panel, in columns
	}{
		{tensor.Float32, FP32, 4, 4, 0, 64},
		{tensor.Float32, BF16, 2, 4, 0, 64},
		{tensor.Float32, INT8, 1, 1, 9, 16},
		{tensor.Float64, FP32, 8, 8, 0, 0},
	} {
		w := tensor.New(tensor.Of(tc.dt), tensor.WithShape(n, k))
		pw, err := PackWeight(w, WithPrecision(tc.prec))
		if err != nil {
			t.Fatal(err)
		}
		lo := tc.width*n*k + tc.extra*n
		hi := tc.most*(n+tc.padCol)*(k+4) + tc.extra*n
		if got := pw.Bytes(); got < lo || got > hi {
			t.Errorf("%v %s: %d bytes, want %d…%d", tc.dt, tc.prec, got, lo, hi)
		}
	}
}
