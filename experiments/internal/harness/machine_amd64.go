//go:build amd64 && !purego

package harness

import "golang.org/x/sys/cpu"

// vectorISA is the instruction set graph/kernels' vector kernels run with
// on this CPU.
func vectorISA() string {
	x := cpu.X86
	return x86Features{AVX2: x.HasAVX2, FMA: x.HasFMA, AVX512F: x.HasAVX512F, AVX512BW: x.HasAVX512BW,
		AVX512VL: x.HasAVX512VL, AVX512DQ: x.HasAVX512DQ}.isa()
}
