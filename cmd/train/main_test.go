package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestDryRunPrintsParameterCounts(t *testing.T) {
	for _, tc := range []struct{ config, total string }{
		{"../../configs/vit_base_patch16_224.yaml", "86,567,656"},
		{"../../configs/vit_tiny_patch16_224.yaml", "5,717,416"},
	} {
		var out, errb bytes.Buffer
		if code := run([]string{"-config", tc.config, "-dry-run"}, &out, &errb); code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.config, code, errb.String())
		}
		if !strings.Contains(out.String(), "blocks.11.attn.qkv.weight") || !strings.Contains(out.String(), "total") || !strings.Contains(out.String(), tc.total) {
			t.Errorf("%s: summary lacks the total %s:\n%s", tc.config, tc.total, out.String())
		}
	}
}

func TestBadInvocations(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "-config is required"},
		{[]string{"-config", "../../configs/mnist_vit_tiny.yaml", "-set", "model.depht=3", "-dry-run"}, `unknown key "model.depht"`},
		{[]string{"-config", "../../configs/mnist_vit_tiny.yaml", "-set", "model.num_heads=5", "-dry-run"}, "model.num_heads"},
		{[]string{"-config", "nope.yaml"}, "nope.yaml"},
		{[]string{"-config", "../../configs/mnist_vit_tiny.yaml", "-log-format", "xml"}, "-log-format"},
	} {
		var out, errb bytes.Buffer
		if code := run(tc.args, &out, &errb); code == 0 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want it to mention %q", tc.args, code, errb.String(), tc.want)
		}
	}
}
