package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vitgo/vit/graph/kernels"
)

// TestEvalNamesTheBF16Kernel: eval -precision bf16 says at start which
// kernel the bf16 products run on (as a warning with its cost where that is
// the emulation on a CPU without a bfloat16 instruction); fp32 says nothing
// of it.
func TestEvalNamesTheBF16Kernel(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none.safetensors") // the line comes before the checkpoint is read
	for _, prec := range []string{"bf16", "fp32"} {
		var out, errb bytes.Buffer
		run([]string{"-checkpoint", missing, "-precision", prec}, &out, &errb)
		line, warn := kernels.BF16KernelNote()
		want := "eval: " + line
		if warn {
			want = "eval: warning: " + line
		}
		if got := strings.Contains(errb.String(), want); got != (prec == "bf16") {
			t.Errorf("-precision %s: stderr %q; want the line %q %v", prec, errb.String(), want, prec == "bf16")
		}
	}
}
