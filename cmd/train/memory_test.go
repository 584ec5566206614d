package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestMemoryCheckReadsRlimitAS: the trainer's memory check reads the
// address-space limit (`ulimit -v`), not only MemAvailable and the cgroup.
// ViT-B/16 at its config's batch fits the machines the suite runs on, so
// the -dry-run passes without a limit; a child started under `ulimit -v`
// 1.5 GB refuses it, exit 1, naming train.batch_size and RLIMIT_AS.
func TestMemoryCheckReadsRlimitAS(t *testing.T) {
	if os.Getenv("VIT_TRAIN_MAIN") != "" {
		t.Skip("a child runs TestSIGINTWritesCheckpoint")
	}
	const config = "../../configs/vit_base_patch16_224.yaml"
	var out, errb bytes.Buffer
	if code := run([]string{"-config", config, "-dry-run"}, &out, &errb); code != 0 {
		t.Skipf("ViT-B/16 does not fit this machine without a limit (exit %d): %s", code, errb.String())
	}
	cmd := exec.Command("sh", "-c", `ulimit -v 1500000 && exec "$0" -test.run='^TestSIGINTWritesCheckpoint$'`, os.Args[0])
	cmd.Env = append(os.Environ(), "VIT_TRAIN_MAIN=-config "+config+" -dry-run")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("under ulimit -v 1500000: %v, want exit 1\nstderr:\n%s", err, stderr.String())
	}
	for _, want := range []string{"train.batch_size", "RLIMIT_AS (ulimit -v)"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
}
