package kernels

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestISASelected checks that the ISA a CI leg asks for (VIT_KERNEL_ISA,
// set beside GODEBUG=cpu.avx512f=off or cpu.avx2=off) is the one that
// runs, so a GODEBUG setting that stopped switching the kernels would not
// pass silently as another leg's rerun.
func TestISASelected(t *testing.T) {
	want := os.Getenv("VIT_KERNEL_ISA")
	if want == "" {
		t.Skip("VIT_KERNEL_ISA not set; this build and CPU run " + ISA())
	}
	if got := ISA(); got != want {
		t.Fatalf("ISA() = %q, want %q (GODEBUG=%q)", got, want, os.Getenv("GODEBUG"))
	}
	if want == "go" && Backend() != "native go 4x4" {
		t.Fatalf("Backend() = %q with the go ISA", Backend())
	}
}

// TestBF16KernelSelected checks that VIT_BF16_KERNEL, where a CI leg sets
// it, selects the bfloat16 backend it names; a CPU (or Linux) without
// AMX-BF16 skips the amx leg with a message, one without AVX512_BF16 the
// vdpbf16ps leg.
func TestBF16KernelSelected(t *testing.T) {
	want := os.Getenv("VIT_BF16_KERNEL")
	switch {
	case want == "":
		t.Skip("VIT_BF16_KERNEL not set; bfloat16 products run on " + BF16Backend())
	case want == "amx" && (!hasAMX() || !hasAVX512):
		t.Skip("this CPU or Linux lacks AMX-BF16 (or AVX-512 is off): the amx leg is not run")
	case want == "vdpbf16ps" && !hasDP():
		t.Skip("this CPU lacks AVX512_BF16 (or AVX-512 is off): the vdpbf16ps leg is not run")
	}
	got := BF16Backend()
	if (want == "amx") != strings.HasSuffix(got, "(tdpbf16ps)") || (want == "vdpbf16ps") != strings.HasSuffix(got, "(vdpbf16ps)") || (want == "emulated") != strings.HasSuffix(got, "(emulated)") {
		t.Fatalf("VIT_BF16_KERNEL=%s runs %q", want, got)
	}
}

// TestCheckBF16KernelEnv: the backends' names pass (amx and vdpbf16ps
// where the CPU runs them: TestBF16KernelEnvNamesWhatTheCPULacks), anything
// else is refused with the variable and the value in the message.
func TestCheckBF16KernelEnv(t *testing.T) {
	for _, tc := range []struct {
		value string
		ok    bool
	}{
		{"", true}, {"amx", hasAVX512 && hasAMX()}, {"vdpbf16ps", hasDP()}, {"emulated", true},
		{"emulate", false}, {"AMX", false}, {" amx", false}, {"avx512", false},
	} {
		t.Setenv(BF16KernelEnv, tc.value)
		err := CheckBF16KernelEnv()
		if (err == nil) != tc.ok {
			t.Errorf("%s=%q: error %v, want ok %t", BF16KernelEnv, tc.value, err, tc.ok)
		}
		if err != nil && tc.value != "amx" && tc.value != "vdpbf16ps" && (!strings.Contains(err.Error(), BF16KernelEnv) || !strings.Contains(err.Error(), fmt.Sprintf("%q", tc.value))) {
			t.Errorf("%s=%q: error %q does not name the variable and its value", BF16KernelEnv, tc.value, err)
		}
	}
}
