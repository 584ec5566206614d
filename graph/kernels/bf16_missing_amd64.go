//go:build amd64 && !purego

package kernels

import "golang.org/x/sys/cpu"

// bf16Missing lists what this CPU (or Linux, or a test's switch) lacks to
// run the bfloat16 kernel named by BF16KernelEnv's value (amx or
// vdpbf16ps), by CPU flag; nil when it can run it.
func bf16Missing(kernel string) []string {
	need := []cpuFlag{
		{"AVX2", cpu.X86.HasAVX2}, {"FMA", cpu.X86.HasFMA},
		{"AVX512F", cpu.X86.HasAVX512F}, {"AVX512BW", cpu.X86.HasAVX512BW}, {"AVX512VL", cpu.X86.HasAVX512VL}, {"AVX512DQ", cpu.X86.HasAVX512DQ},
		{"AVX512_BF16", cpu.X86.HasAVX512BF16},
	}
	if kernel == "amx" {
		need = append(need, cpuFlag{"AMX_TILE", cpu.X86.HasAMXTile}, cpuFlag{"AMX_BF16", cpu.X86.HasAMXBF16})
	}
	var miss []string
	for _, n := range need {
		if !n.ok {
			miss = append(miss, n.flag)
		}
	}
	switch {
	case len(miss) > 0:
	case !hasAVX512:
		miss = append(miss, "AVX-512 (switched off: GODEBUG=cpu.avx512f=off?)")
	case kernel == "amx" && !hasAMX():
		miss = append(miss, "Linux's permission to use AMX tiles (arch_prctl ARCH_REQ_XCOMP_PERM refused)")
	case kernel == "vdpbf16ps" && !hasDP():
		miss = append(miss, "AVX512_BF16 (switched off)")
	}
	return miss
}

// cpuFlag is a CPU flag by its name in Intel's manuals, and whether this
// CPU has it.
type cpuFlag struct {
	flag string
	ok   bool
}
