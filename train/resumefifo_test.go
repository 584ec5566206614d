package train

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/vitgo/vit/internal/regfile"
	"github.com/vitgo/vit/report"
)

// swapForFIFO replaces path by a named pipe with no writer and returns a
// function that puts the file back.
func swapForFIFO(t *testing.T, path string) (restore func()) {
	t.Helper()
	keep, err := regfile.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	return func() {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, keep, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestResumeRefusesFIFO: -resume of a distilled run whose teacher, metrics.csv,
// steps.csv or out_dir lock file is now a named pipe is refused by the file's type, with an
// error naming the path, instead of blocking in an open that no signal ends
// (the teacher as distill.teacher). Each refusal leaves the run resumable.
func TestResumeRefusesFIFO(t *testing.T) {
	ctx := context.Background()
	cfg := distillRun(t)
	if _, err := Run(ctx, cfg, Options{Log: quietLog()}); err != nil {
		t.Fatal(err)
	}
	more := cfg
	more.Train.MaxSteps = 6
	for _, tc := range []struct {
		name, path, key string
	}{
		{"teacher", cfg.Distill.Teacher, "distill.teacher"},
		{"metrics.csv", filepath.Join(cfg.Train.OutDir, MetricsFile), ""},
		{"steps.csv", filepath.Join(cfg.Train.OutDir, report.StepsFile), ""},
		{"the lock file", filepath.Join(cfg.Train.OutDir, LockFile), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			restore := swapForFIFO(t, tc.path)
			defer restore()
			_, err := Run(ctx, more, Options{Log: quietLog(), Resume: true})
			var nr *regfile.NotRegularError
			if !errors.As(err, &nr) || nr.Path != tc.path || nr.Mode&fs.ModeNamedPipe == 0 {
				t.Fatalf("resume with %s a FIFO: %v, want a *regfile.NotRegularError naming %s", tc.name, err, tc.path)
			}
			if tc.key != "" && !hasKey(err, tc.key) {
				t.Errorf("resume with %s a FIFO: %v, want a *ConfigError for %s", tc.name, err, tc.key)
			}
		})
	}
	if _, err := Run(ctx, more, Options{Log: quietLog(), Resume: true}); err != nil {
		t.Fatalf("resume with the files back: %v", err)
	}
}

// TestResumeTeacherByBytes: the teacher is the run's by its bytes, not its
// path: a byte-identical copy at a new path resumes (an info line names
// both paths), a file of other bytes at a new path is refused naming
// distill.teacher.
func TestResumeTeacherByBytes(t *testing.T) {
	ctx := context.Background()
	cfg := distillRun(t)
	if _, err := Run(ctx, cfg, Options{Log: quietLog()}); err != nil {
		t.Fatal(err)
	}
	raw, err := regfile.ReadFile(cfg.Distill.Teacher)
	if err != nil {
		t.Fatal(err)
	}
	other := writeTeacherSeeded(t, cfg, 11)

	moved := cfg
	moved.Train.MaxSteps = 6
	moved.Distill.Teacher = filepath.Join(t.TempDir(), "moved.safetensors")
	if err := os.WriteFile(moved.Distill.Teacher, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	log := logrus.New()
	log.SetOutput(&logs)
	if _, err := Run(ctx, moved, Options{Log: log, Resume: true}); err != nil {
		t.Fatalf("resume with the same teacher at a new path: %v", err)
	}
	var line string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "distill.teacher") && strings.Contains(l, "level=info") {
			line = l
		}
	}
	if !strings.Contains(line, cfg.Distill.Teacher) || !strings.Contains(line, moved.Distill.Teacher) {
		t.Errorf("no info line naming both teacher paths %s and %s:\n%s", cfg.Distill.Teacher, moved.Distill.Teacher, logs.String())
	}

	changed := moved
	changed.Train.MaxSteps = 8
	changed.Distill.Teacher = other
	_, err = Run(ctx, changed, Options{Log: quietLog(), Resume: true})
	var rce *ResumeConfigError
	if !errors.As(err, &rce) || len(rce.Changes) != 1 || rce.Changes[0].Key != "distill.teacher" {
		t.Fatalf("resume with another teacher at a new path: %v, want a *ResumeConfigError naming distill.teacher", err)
	}
}

// TestLoadTeacherOpensOnce: the teacher file is opened once, and its digest
// is of the bytes that open read: a second open to hash it could read
// another file (a link swapped meanwhile) or block on a FIFO put there.
func TestLoadTeacherOpensOnce(t *testing.T) {
	cfg := distillRun(t)
	opens := 0
	regfile.BeforeOpen = func(path string) {
		if path == cfg.Distill.Teacher {
			opens++
		}
	}
	defer func() { regfile.BeforeOpen = nil }()
	teacher, err := LoadTeacher(cfg.Distill, cfg.Model)
	regfile.BeforeOpen = nil
	if err != nil {
		t.Fatal(err)
	}
	raw, err := regfile.ReadFile(cfg.Distill.Teacher)
	if err != nil {
		t.Fatal(err)
	}
	if want := sha256.Sum256(raw); opens != 1 || teacher.SHA256 != hex.EncodeToString(want[:]) {
		t.Errorf("LoadTeacher opened the teacher %d times, digest %s; want once, %x", opens, teacher.SHA256, want)
	}
}
