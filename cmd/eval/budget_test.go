package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/vitgo/vit/evaluate"
	"github.com/vitgo/vit/internal/cfgerr"
	"github.com/vitgo/vit/internal/memory"
	"github.com/vitgo/vit/internal/synthimg"
	"github.com/vitgo/vit/layers"
)

// TestBudgetUnderRlimitASImages runs `eval -images -workers 12` as a
// process under `ulimit -v` (3 GB) on twelve 7000×7000 PNGs, each within
// every pixel and byte limit but decoding to 196 MB: twelve decodes at once
// need more than the address space, and less than half of most machines'
// free memory (the former default budget, which let them all start and
// died of a Go runtime out-of-memory). The default budget now reads
// RLIMIT_AS less the address space in use, so the decodes wait their turn
// and every image is classified (under a lower limit, each is classified or
// refused naming the decode budget, and the process does not crash).
func TestBudgetUnderRlimitASImages(t *testing.T) {
	if testing.Short() {
		t.Skip("decodes 12 images of 49 megapixels")
	}
	const n = 12
	dir := t.TempDir()
	ckpt := untrainedCheckpoint(t, dir, 16, 0)
	body, err := synthimg.FlatPNG(7000, 7000)
	if err != nil {
		t.Fatal(err)
	}
	imgs := filepath.Join(dir, "imgs")
	os.Mkdir(imgs, 0o755)
	for i := range n {
		if err := os.WriteFile(filepath.Join(imgs, fmt.Sprintf("%02d.png", i)), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	kib := ulimitV(3_000_000)
	cmd := exec.Command("sh", "-c", `ulimit -v "$1" && exec "$0" -test.run='^TestEvalSIGINT$'`, os.Args[0], fmt.Sprint(kib))
	cmd.Env = append(os.Environ(), "VIT_EVAL_MAIN=-checkpoint "+ckpt+" -images "+imgs+" -workers 12 -batch 4")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	served := err == nil && strings.Contains(stderr.String(), fmt.Sprintf("classified %d images, skipped 0", n))
	// Under a lower limit (CI's guard runs this test under 1 GB) there may
	// be no room for one such image: then each is skipped, naming the
	// decode budget, rather than the process crashing.
	refused := kib < 3_000_000 && strings.Count(stderr.String(), "more than the whole decode budget") == n &&
		strings.Contains(stderr.String(), "no image could be classified")
	if !served && !refused {
		t.Fatalf("under ulimit -v %d: %v\nstdout:\n%s\nstderr:\n%s", kib, err, stdout.String(), stderr.String())
	}
}

// ulimitV is the address-space limit (KiB) for a child: want, or the
// test's own limit where that is lower (CI's guard runs this test under
// one), since a child cannot raise it.
func ulimitV(want int64) int64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &lim); err == nil && lim.Cur != ^uint64(0) && int64(lim.Cur>>10) < want {
		return int64(lim.Cur >> 10)
	}
	return want
}

// TestImagesNamesFlags: -images refusals name the flags the user can set
// (-img-size, -batch, -max-pixels), never the config keys that -images
// cannot set (model.img_size, train.eval_batch_size, data.max_pixels), and
// a flag refusal is status 2 as docs/evaluation.md says.
func TestImagesNamesFlags(t *testing.T) {
	dir := t.TempDir()
	ckpt := untrainedCheckpoint(t, dir, 16, 0)
	img := filepath.Join(dir, "x.png")
	writeColour(t, img, 0)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-img-size", "1792", "-batch", "1"}, 2, "-img-size 1792x1792"},
		{[]string{"-max-pixels", "99"}, 1, "over -max-pixels 99"},
		{[]string{"-max-pixels", "0"}, 2, "-max-pixels 0"},
		{[]string{"-max-pixels", "2000000000"}, 2, "-max-pixels 2000000000"},
	} {
		var out, errb bytes.Buffer
		code := run(append([]string{"-checkpoint", ckpt, "-images", img}, tc.args...), &out, &errb)
		msg := errb.String()
		if code != tc.code || !strings.Contains(msg, tc.want) || strings.Contains(msg, "model.img_size") ||
			strings.Contains(msg, "train.eval_batch_size") || strings.Contains(msg, "data.max_pixels") {
			t.Errorf("%v: exit %d, stderr %q; want %d naming %q and no config key", tc.args, code, msg, tc.code, tc.want)
		}
	}
}

// TestImagesMemoryRefusalNamesFlags: the machine-memory refusal that
// checkpoint.LoadModel returns for one image at -img-size (a
// *memory.Error under the key train.eval_batch_size) is status 2 naming
// -img-size and -batch; at the checkpoint's own size it is status 1.
func TestImagesMemoryRefusalNamesFlags(t *testing.T) {
	err := fmt.Errorf("m.safetensors: %w", &cfgerr.Error{Key: "train.eval_batch_size",
		Err: &memory.Error{Need: 40 << 30, Have: 8 << 30, Source: "cgroup", Part: "evaluation activations"}})
	batch := 1
	f := &imageFlags{batch: &batch}
	size := layers.Size2{1792, 1792}
	for _, tc := range []struct {
		o    evaluate.Options
		code int
		want string
	}{
		{evaluate.Options{Checkpoint: "m.safetensors", ImgSize: &size}, 2, "-img-size 1792x1792 with -batch 1"},
		{evaluate.Options{Checkpoint: "m.safetensors"}, 1, "m.safetensors: one image"},
	} {
		code, msg := f.loadRefusal(err, tc.o)
		if code != tc.code || !strings.Contains(msg, tc.want) || strings.Contains(msg, "train.eval_batch_size") {
			t.Errorf("img-size %v: %d %q, want %d naming %q", tc.o.ImgSize, code, msg, tc.code, tc.want)
		}
	}
	if code, msg := f.loadRefusal(errors.New("other"), evaluate.Options{}); code != 0 || msg != "" {
		t.Errorf("an unrelated error: %d %q, want none", code, msg)
	}
}
