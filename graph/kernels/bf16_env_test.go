package kernels

import (
	"errors"
	"strings"
	"testing"
)

// withAVX512Off runs f with the AVX-512 kernels switched off, as on a CPU
// without them (the bfloat16 instructions included).
func withAVX512Off(f func()) {
	saved := hasAVX512
	defer func() { hasAVX512 = saved }()
	hasAVX512 = false
	f()
}

// TestBF16KernelEnvNamesWhatTheCPULacks: VIT_BF16_KERNEL=amx or
// =vdpbf16ps on a CPU without that kernel is refused with a
// *BF16KernelError naming the variable and the missing CPU flags (the
// products used to run another backend silently); on a CPU with it, it is
// accepted. With AVX-512 switched off both are refused whatever the CPU;
// emulated and unset are always accepted.
func TestBF16KernelEnvNamesWhatTheCPULacks(t *testing.T) {
	has := map[string]bool{}
	for _, pt := range allPairedTiles() {
		switch {
		case strings.HasPrefix(pt.name, "amx"):
			has["amx"] = true
		case strings.Contains(pt.name, "vdpbf16ps"):
			has["vdpbf16ps"] = true
		}
	}
	check := func(value string, runnable bool) {
		t.Helper()
		t.Setenv(BF16KernelEnv, value)
		err := CheckBF16KernelEnv()
		var ke *BF16KernelError
		switch {
		case runnable && err != nil:
			t.Errorf("%s=%s on a CPU that runs it: %v", BF16KernelEnv, value, err)
		case !runnable && (!errors.As(err, &ke) || ke.Value != value || len(ke.Missing) == 0 || !strings.Contains(err.Error(), BF16KernelEnv+"="+value)):
			t.Errorf("%s=%s on a CPU without it: %v, want a *BF16KernelError naming the variable and the missing flags", BF16KernelEnv, value, err)
		}
	}
	for _, v := range []string{"amx", "vdpbf16ps"} {
		check(v, has[v])
	}
	withAVX512Off(func() {
		check("amx", false)
		check("vdpbf16ps", false)
		check("emulated", true)
		check("", true)
	})
	t.Setenv(BF16KernelEnv, "avx2")
	var ke *BF16KernelError
	if err := CheckBF16KernelEnv(); err == nil || errors.As(err, &ke) {
		t.Errorf("%s=avx2: %v, want the unknown-value error", BF16KernelEnv, err)
	}
}

// TestBF16KernelNote: the line the commands log names the kernel the bf16
// products run on; the emulation on a CPU without a bfloat16 instruction
// is a warning that gives its cost against fp32; the emulation asked for
// is no warning.
func TestBF16KernelNote(t *testing.T) {
	t.Setenv(BF16KernelEnv, "")
	bf16Tiles() // the choice is made once; the cases below replace it
	saved := bf16Pick.tiles
	defer func() { bf16Pick.tiles = saved }()
	if hasAVX512 {
		for _, pt := range allPairedTiles() {
			bf16Pick.tiles = pt
			if line, warn := BF16KernelNote(); warn || !strings.Contains(line, pt.name) {
				t.Errorf("on %s: %q (warn %v), want it named, no warning", pt.name, line, warn)
			}
		}
	}
	withAVX512Off(func() {
		line, warn := BF16KernelNote()
		if !warn || !strings.Contains(line, "emulated") || !strings.Contains(line, bf16EmulatedCost) || !strings.Contains(line, emulKernel().name) {
			t.Errorf("emulating on a CPU without bf16: %q (warn %v), want a warning with the kernel and the cost", line, warn)
		}
		t.Setenv(BF16KernelEnv, "emulated")
		if line, warn := BF16KernelNote(); warn || !strings.Contains(line, "emulated") {
			t.Errorf("%s=emulated: %q (warn %v), want the emulation named, no warning", BF16KernelEnv, line, warn)
		}
	})
}
