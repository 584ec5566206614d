//go:build amd64 && !purego

package kernels

import "golang.org/x/sys/cpu"

// CPU features the assembly kernels need, detected once at start-up. Tests
// switch them off to exercise the slower paths on the same machine.
var (
	hasAVX2   = cpu.X86.HasAVX2 && cpu.X86.HasFMA
	hasAVX512 = hasAVX2 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512DQ
)
