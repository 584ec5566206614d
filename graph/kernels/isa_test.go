package kernels

import (
	"os"
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
