package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/vitgo/vit/graph/kernels"
	"github.com/vitgo/vit/internal/gate"
	"github.com/vitgo/vit/train"
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
		{[]string{"-config", "../../configs/mnist_vit_tiny.yaml", "-set", "model.depht=3", "-dry-run"}, "model.depht: unknown key"},
		{[]string{"-config", "../../configs/mnist_vit_tiny.yaml", "-set", "model.num_heads=5", "-dry-run"}, "model.num_heads"},
		{[]string{"-config", "../../configs/mnist_vit_tiny.yaml", "-set", "train.precision=fp16", "-dry-run"}, "train.precision"},
		{[]string{"-config", "../../configs/mnist_vit_tiny.yaml", "-set", "train.precision=int8", "-dry-run"}, "train.precision: int8 is an inference precision"},
		{[]string{"-config", "nope.yaml"}, "nope.yaml"},
		{[]string{"-config", "../../configs/mnist_vit_tiny.yaml", "-log-format", "xml"}, "-log-format"},
	} {
		var out, errb bytes.Buffer
		if code := run(tc.args, &out, &errb); code == 0 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want it to mention %q", tc.args, code, errb.String(), tc.want)
		}
	}
}

// TestBF16KernelEnvRefused: an unknown VIT_BF16_KERNEL is refused before
// the config is read, naming the variable and its value.
func TestBF16KernelEnvRefused(t *testing.T) {
	t.Setenv(kernels.BF16KernelEnv, "emulate")
	var out, errb bytes.Buffer
	if code := run([]string{"-config", "../../configs/mnist_vit_tiny.yaml", "-dry-run"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), kernels.BF16KernelEnv+`="emulate"`) {
		t.Errorf("exit %d, stderr %q, want 2 and the variable named", code, errb.String())
	}
}

// TestSIGINTWritesCheckpoint sends a real SIGINT to a training process: it
// must finish the step, write last.*, exit 130 and say how to resume. Every
// batch holds a gate, so the signal lands during the first step.
func TestSIGINTWritesCheckpoint(t *testing.T) {
	if os.Getenv("VIT_TRAIN_MAIN") != "" {
		gate.Install() // a test's gates hold this child at their files
		os.Exit(run(strings.Fields(os.Getenv("VIT_TRAIN_MAIN")), os.Stdout, os.Stderr))
	}
	dir := t.TempDir()
	folder, g, pix := gatedFolder(t, "train")
	cfg := writeConfig(t, dir, model+folder+"train: {epochs: 1000, batch_size: 17}\n")
	out := filepath.Join(dir, "out")
	c := startTrainer(t, "-config", cfg, "-out", out)
	c.hold(t, g).Pass(pix) // data.Open checks each image's header
	held := c.hold(t, g)   // a batch of the first epoch
	if err := c.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	c.waitFor(t, "again to exit at once")
	held.Pass(pix)
	serve(t, g, pix) // the step's batch, and the resumed run below
	if code := c.wait(t); code != 130 {
		t.Fatalf("exit %d, want status 130; stderr:\n%s", code, c.stderr())
	}
	if !strings.Contains(c.stderr(), "training interrupted") || !strings.Contains(c.stderr(), "-resume") {
		t.Fatalf("stderr does not say how to resume:\n%s", c.stderr())
	}
	// The signal stopped the run after the step it arrived in, and the
	// checkpoint holds where it stopped.
	st, err := train.LoadState(filepath.Join(out, train.LastState))
	if err != nil {
		t.Fatal(err)
	}
	if st.Step != 1 {
		t.Fatalf("checkpoint at step %d, want 1: the signal arrived during the first step", st.Step)
	}
	// And -resume picks it up.
	var o, e bytes.Buffer
	if code := run([]string{"-config", cfg, "-out", out, "-resume", "-set", "train.max_steps=3"}, &o, &e); code != 0 {
		t.Fatalf("resume: exit %d: %s", code, e.String())
	}
	if st, err := train.LoadState(filepath.Join(out, train.LastState)); err != nil || st.Step != 3 {
		t.Fatalf("after -resume: step %d (%v), want 3", st.Step, err)
	}
}

// TestHostileConfigs runs hostile configs through the real
// binary (this test re-executed as cmd/train): each must exit non-zero with
// no Go stack trace and a message naming the key (or the file), in training
// and in -dry-run alike.
func TestHostileConfigs(t *testing.T) {
	if os.Getenv("VIT_TRAIN_MAIN") != "" {
		return // the child is run by TestSIGINTWritesCheckpoint's hook
	}
	dir := t.TempDir()
	tiny := "../../configs/mnist_vit_tiny.yaml"
	file := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	big := file("big.yaml", "model:\n  depth: 2\n# "+strings.Repeat("x", 1<<20)+"\n")
	for _, tc := range []struct {
		config string
		set    []string
		want   string
	}{
		{tiny, []string{"model.ln_eps=.inf"}, "model.ln_eps"},
		{tiny, []string{"model.img_size=100000"}, "model.img_size"},
		{tiny, []string{"model.embed_dim=1e9"}, "model.embed_dim"},
		{tiny, []string{"model.num_classes=1e9"}, "model.num_classes"},
		{tiny, []string{"model.mlp_ratio=1e12"}, "model.mlp_ratio"},
		{tiny, []string{"model.depth=1e6"}, "model.depth"},
		{tiny, []string{"train.threads=1e6"}, "train.threads"},
		{tiny, []string{"data.prefetch=1e9"}, "data.prefetch"},
		{tiny, []string{"train.eval_batch_size=1e9"}, "train.eval_batch_size"},
		{tiny, []string{"train.batch_size=16.7"}, "train.batch_size"},
		{tiny, []string{"train.epochs=2.9"}, "train.epochs"},
		{tiny, []string{"model.depth="}, "model.depth"},
		{tiny, []string{"train.batch_size=abc"}, "train.batch_size"},
		{"../../configs/vit_base_patch16_224.yaml", []string{"train.batch_size=65536"}, "train.batch_size"},
		{file("two.yaml", "model:\n  depth: 2\n---\nmodel:\n  depth: 3\n"), nil, "second YAML document"},
		{file("type.yaml", "train:\n  epochs: 1\n  batch_size: abc\n"), nil, "train.batch_size (line 3)"},
		{file("trunc.yaml", "train:\n  batch_size: 16.7\n"), nil, "train.batch_size (line 2)"},
		{big, nil, "big.yaml"},
	} {
		for _, dry := range []bool{true, false} {
			args := []string{"-config", tc.config, "-out", filepath.Join(dir, "out")}
			for _, s := range tc.set {
				args = append(args, "-set", s)
			}
			if dry {
				args = append(args, "-dry-run")
			}
			cmd := exec.Command(os.Args[0], "-test.run=^TestSIGINTWritesCheckpoint$")
			cmd.Env = append(os.Environ(), "VIT_TRAIN_MAIN="+strings.Join(args, " "))
			var stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = io.Discard, &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			msg := stderr.String()
			if !errors.As(err, &ee) || ee.ExitCode() == 0 {
				t.Errorf("%v: %v, want a non-zero exit", args, err)
			}
			if strings.Contains(msg, "goroutine ") || strings.Contains(msg, "panic") || strings.Contains(msg, "fatal error") {
				t.Errorf("%v: a Go crash:\n%.2000s", args, msg)
			}
			if !strings.Contains(msg, tc.want) {
				t.Errorf("%v: stderr %q does not name %q", args, msg, tc.want)
			}
		}
	}
}

// TestRefusalsNameTheFlags: the library's typed refusals reach the user
// with the flags that resolve them.
func TestRefusalsNameTheFlags(t *testing.T) {
	out := t.TempDir()
	tiny := []string{"-config", "../../configs/mnist_vit_tiny.yaml", "-out", out, "-set", "train.epochs=1", "-set", "train.max_steps=1",
		"-set", "data.limit_train=64", "-set", "data.limit_val=32", "-set", "train.batch_size=32"}
	for _, tc := range []struct {
		name  string
		args  []string
		setup func()
		want  []string
	}{
		{"resume with overwrite", append(tiny, "-resume", "-overwrite"), nil, []string{"-resume and -overwrite exclude each other"}},
		{"resume of nothing", append(tiny, "-resume"), nil, []string{train.LastState, "start without -resume"}},
		{"empty -set", append(tiny, "-set", "model.depth="), nil, []string{"model.depth", "-set model.depth="}},
		{"used directory", tiny, func() {
			if err := os.WriteFile(filepath.Join(out, train.MetricsFile), []byte("x\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(out, train.LastModel), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, []string{train.LastModel, "pass -resume to continue it, or -overwrite"}},
	} {
		if tc.setup != nil {
			tc.setup()
		}
		var stdout, stderr bytes.Buffer
		code := run(tc.args, &stdout, &stderr)
		for _, w := range tc.want {
			if code == 0 || !strings.Contains(stderr.String(), w) {
				t.Errorf("%s: exit %d, stderr %q, want it to mention %q", tc.name, code, stderr.String(), w)
			}
		}
	}
}

// TestProfileCollidesWithRun: a -cpuprofile or -memprofile path that is a
// file the run writes in its out_dir (any spelling), out_dir itself, or a
// model file the run reads is refused at start with exit 2, naming the flag
// and the file, before anything is read, trained or written.
func TestProfileCollidesWithRun(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	init := filepath.Join(dir, "init.safetensors")
	cfg := "../../configs/mnist_vit_tiny.yaml"
	for _, tc := range []struct {
		flag, path string
		extra      []string
	}{
		{"-cpuprofile", filepath.Join(out, train.LastModel), nil},
		{"-cpuprofile", filepath.Join(out, ".", "epoch_3.safetensors"), nil},
		{"-memprofile", filepath.Join(out, train.MetricsFile), nil},
		{"-memprofile", filepath.Join(out, "steps.csv"), nil},
		{"-cpuprofile", filepath.Join(out, train.LockFile), nil},
		{"-cpuprofile", out, nil},
		{"-cpuprofile", init, []string{"-set", "finetune.init_from=" + init}},
	} {
		args := append([]string{"-config", cfg, "-out", out, tc.flag, tc.path, "-dry-run"}, tc.extra...)
		var o, e bytes.Buffer
		code := run(args, &o, &e)
		if code != 2 || !strings.Contains(e.String(), tc.flag) || !strings.Contains(e.String(), tc.path) {
			t.Errorf("%s %s: exit %d, stderr %q; want 2 naming the flag and the file", tc.flag, tc.path, code, e.String())
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("%s %s: %s was created", tc.flag, tc.path, out)
		}
	}
}
