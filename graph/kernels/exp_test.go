package kernels

import "testing"

// TestSoftmaxRowsSmallAllocatesNothing: attention calls the softmax kernels
// per head thousands of times a step; small calls must not allocate.
func TestSoftmaxRowsSmallAllocatesNothing(t *testing.T) {
	x, y := make([]float32, 50*50), make([]float32, 50*50)
	for i := range x {
		x[i], y[i] = float32(i%7), 1/50.0
	}
	if n := testing.AllocsPerRun(20, func() { SoftmaxRows(x, 50, 50) }); n != 0 {
		t.Errorf("SoftmaxRows(50×50): %v allocations per call", n)
	}
	if n := testing.AllocsPerRun(20, func() { SoftmaxBackwardRows(x, y, x, 50, 50) }); n != 0 {
		t.Errorf("SoftmaxBackwardRows(50×50): %v allocations per call", n)
	}
}
