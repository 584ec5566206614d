package train

import (
	"bufio"
	"context"
	"errors"
	"github.com/vitgo/vit/evaluate"
	"github.com/vitgo/vit/report"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// quickRun is tinyRun cut to two steps per epoch and one epoch.
func quickRun(t *testing.T) Config {
	cfg := tinyRun(t)
	cfg.Data.LimitTrain, cfg.Data.LimitVal, cfg.Train.Epochs = 64, 64, 1
	return cfg
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

// TestOutDirOneRun: a fresh run into a directory holding an earlier run's
// files is refused unless -resume or -overwrite; -overwrite deletes only the
// run's own files.
func TestOutDirOneRun(t *testing.T) {
	cfg := quickRun(t)
	cfg.Checkpoint.KeepLast = 1
	out := cfg.Train.OutDir
	if _, err := Run(context.Background(), cfg, Options{Log: quietLog()}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Run(context.Background(), cfg, Options{Log: quietLog()})
	var used *OutDirUsedError
	if !errors.As(err, &used) || used.Dir != out || !slices.Contains(used.Files, BestModel) || !strings.Contains(err.Error(), BestModel) {
		t.Fatalf("fresh run into a used directory: %v, want *OutDirUsedError naming %s", err, BestModel)
	}
	if _, err := Run(context.Background(), cfg, Options{Log: quietLog(), Resume: true, Overwrite: true}); !errors.Is(err, ErrResumeOverwrite) {
		t.Fatalf("resume with overwrite: %v, want ErrResumeOverwrite", err)
	}
	// -overwrite: a model that can never score best keeps the old best.* from
	// surviving; epoch_1 is rewritten, notes.txt stays.
	cfg.Checkpoint.KeepLast = 0
	cfg.Checkpoint.SaveBest.Set(false)
	if _, err := Run(context.Background(), cfg, Options{Log: quietLog(), Overwrite: true}); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(dirNames(t, out), " ")
	if want := ".train.lock config.yaml curves.png last.safetensors last.train.safetensors metrics.csv notes.txt steps.csv"; got != want {
		t.Fatalf("after -overwrite: %s\nwant %s", got, want)
	}
	// A directory holding only what a run that died before its first
	// checkpoint leaves (config.yaml, header-only CSVs) is reused, and that
	// run's records are replaced.
	only := t.TempDir()
	for _, f := range []string{ConfigFile, MetricsFile, "steps.csv"} {
		os.WriteFile(filepath.Join(only, f), []byte("stale\n"), 0o644)
	}
	cfg.Train.OutDir = only
	if _, err := Run(context.Background(), cfg, Options{Log: quietLog(), Resume: true}); !errors.As(err, new(*NoRunError)) {
		t.Fatalf("resume of a run that died before its first checkpoint: %v, want *NoRunError", err)
	}
	if _, err := Run(context.Background(), cfg, Options{Log: quietLog()}); err != nil {
		t.Fatalf("directory of a run that died before its first checkpoint: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(only, MetricsFile)); strings.Contains(string(b), "stale") {
		t.Fatalf("the dead run's metrics.csv survived: %q", b)
	}
}

// TestLockHeldByAnotherProcess: while another process holds the output
// directory, Run refuses with that process's PID; once it is killed (no
// chance to clean up), the OS has released the lock.
func TestLockHeldByAnotherProcess(t *testing.T) {
	if dir := os.Getenv("VIT_HOLD_LOCK"); dir != "" {
		if _, err := lockDir(dir); err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString("locked\n")
		select {} // hold it until killed
	}
	cfg := quickRun(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHeldByAnotherProcess$")
	cmd.Env = append(os.Environ(), "VIT_HOLD_LOCK="+cfg.Train.OutDir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "locked\n" {
		t.Fatalf("child: %q", line)
	}
	_, err = Run(context.Background(), cfg, Options{Log: quietLog()})
	var locked *OutDirLockedError
	if !errors.As(err, &locked) || locked.PID != cmd.Process.Pid || !strings.Contains(err.Error(), "PID "+strconv.Itoa(cmd.Process.Pid)) {
		t.Fatalf("second trainer: %v, want *OutDirLockedError naming PID %d", err, cmd.Process.Pid)
	}
	if names := dirNames(t, cfg.Train.OutDir); len(names) != 1 {
		t.Fatalf("the refused run wrote %v", names)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if _, err := Run(context.Background(), cfg, Options{Log: quietLog()}); err != nil {
		t.Fatalf("after the holder was killed: %v", err)
	}
	// In-process too: the lock is per open file, so a second lockDir fails
	// while the first is held and succeeds after release.
	release, err := lockDir(cfg.Train.OutDir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lockDir(cfg.Train.OutDir); !errors.As(err, &locked) || locked.PID != os.Getpid() {
		t.Fatalf("second lock: %v", err)
	}
	release()
	if r, err := lockDir(cfg.Train.OutDir); err != nil {
		t.Fatalf("after release: %v", err)
	} else {
		r()
	}
}

// TestRunCleansTempsAndWrites0644: a temporary file left by a killed run is
// removed at start, none is left at the end, and every output is 0644 even
// under a strict umask.
func TestRunCleansTempsAndWrites0644(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	cfg := quickRun(t)
	out := cfg.Train.OutDir
	stale := filepath.Join(out, ".last.safetensors.tmp-123456")
	if err := os.WriteFile(stale, []byte("partial"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), cfg, Options{Log: quietLog()}); err != nil {
		t.Fatal(err)
	}
	for _, n := range dirNames(t, out) {
		fi, err := os.Stat(filepath.Join(out, n))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(n, ".tmp-") {
			t.Errorf("temporary file left: %s", n)
		}
		if n != LockFile && fi.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %v, want 0644", n, fi.Mode().Perm())
		}
	}
	// cmd/eval's reports too.
	o := evaluate.Options{Checkpoint: filepath.Join(out, LastModel), Loader: evalLoader(cfg)}
	files := report.EvalFiles{Results: filepath.Join(out, "r.json"), Predictions: filepath.Join(out, "p.csv"), Confusion: filepath.Join(out, "c.png")}
	if _, _, _, err := evalToFiles(context.Background(), o, files); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{files.Results, files.Predictions, files.Confusion} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o644 {
			t.Errorf("%s: %v, want mode 0644", p, err)
		}
	}
}
