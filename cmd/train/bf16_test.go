package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/vitgo/vit/graph/kernels"
)

// TestDryRunNamesTheBF16Kernel: with train.precision bf16, -dry-run says
// which kernel the bf16 products run on (a warning with its cost where
// that is the emulation on a CPU without a bfloat16 instruction), and so
// does the start of a run (same code path, logged); in fp32 it says
// nothing of it. VIT_BF16_KERNEL=emulated is named as asked for. A kernel
// the CPU lacks is refused, naming the variable (on every CPU: emulated
// always runs; amx and vdpbf16ps are refused exactly where the kernels
// package says they cannot run).
func TestDryRunNamesTheBF16Kernel(t *testing.T) {
	for _, tc := range []struct {
		env, precision string
		want           string // "" : no bf16 kernel line
	}{
		{"", "bf16", "note"},
		{"emulated", "bf16", "emulated, as " + kernels.BF16KernelEnv + "=emulated asks"},
		{"", "fp32", ""},
	} {
		t.Setenv(kernels.BF16KernelEnv, tc.env)
		var out, errb bytes.Buffer
		if code := run([]string{"-config", "../../configs/mnist_vit_tiny.yaml", "-set", "train.precision=" + tc.precision, "-dry-run"}, &out, &errb); code != 0 {
			t.Fatalf("%s=%s %s: exit %d: %s", kernels.BF16KernelEnv, tc.env, tc.precision, code, errb.String())
		}
		line, _ := kernels.BF16KernelNote()
		switch {
		case tc.want == "" && strings.Contains(out.String(), "bf16 kernel"):
			t.Errorf("fp32 dry run names a bf16 kernel:\n%s", out.String())
		case tc.want != "" && !strings.Contains(out.String(), line):
			t.Errorf("%s=%s: dry run does not say %q:\n%s", kernels.BF16KernelEnv, tc.env, line, out.String())
		case tc.want != "note" && !strings.Contains(line, tc.want):
			t.Errorf("%s=%s: %q does not say %q", kernels.BF16KernelEnv, tc.env, line, tc.want)
		}
	}
	for _, k := range []string{"amx", "vdpbf16ps"} {
		t.Setenv(kernels.BF16KernelEnv, k)
		var out, errb bytes.Buffer
		code := run([]string{"-config", "../../configs/mnist_vit_tiny.yaml", "-set", "train.precision=bf16", "-dry-run"}, &out, &errb)
		if refused := kernels.CheckBF16KernelEnv() != nil; refused != (code == 2 && strings.Contains(errb.String(), kernels.BF16KernelEnv+"="+k)) {
			t.Errorf("%s=%s: exit %d, stderr %q; want refused %v", kernels.BF16KernelEnv, k, code, errb.String(), refused)
		}
	}
}
