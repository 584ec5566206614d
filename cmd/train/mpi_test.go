//go:build mpi

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vitgo/vit/checkpoint/safetensors"
	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/train"
)

// These tests start this test binary as the ranks of an mpirun job: with
// VIT_TRAIN_MPI set, TestMPIRankMain runs cmd/train's main on its words.
// MPI starts once per process, so each job is a fresh set of processes.
const rankEnv = "VIT_TRAIN_MPI"

// TestMPIRankMain is one rank of a job started by the tests below.
func TestMPIRankMain(t *testing.T) {
	if args := os.Getenv(rankEnv); args != "" {
		os.Exit(run(strings.Fields(args), os.Stdout, os.Stderr))
	}
	t.Skip("runs as a rank of an mpirun job only")
}

// mpiCmd returns the command `mpirun --oversubscribe -np N <this binary>`
// running cmd/train with args (np 0: this binary alone, no mpirun).
// Each element of argSets is one rank group (mpirun's MPMD form, one rank
// each), when more than one is given. grace is Open MPI's
// odls_base_sigkill_timeout: the seconds mpirun waits after a SIGINT before
// it sends the ranks SIGTERM, and again before SIGKILL (0: its default, 1).
func mpiCmd(t *testing.T, ctx context.Context, np, grace int, argSets ...string) *exec.Cmd {
	t.Helper()
	if _, err := exec.LookPath("mpirun"); err != nil {
		t.Skip("mpirun not installed (scripts/setup.sh installs Open MPI)")
	}
	self := []string{os.Args[0], "-test.run=^TestMPIRankMain$"}
	launch := []string{"--oversubscribe", "--bind-to", "none"}
	if grace > 0 {
		launch = append(launch, "--mca", "odls_base_sigkill_timeout", strconv.Itoa(grace))
	}
	var cmd *exec.Cmd
	switch {
	case np == 0:
		cmd = exec.CommandContext(ctx, self[0], self[1:]...)
		cmd.Env = append(os.Environ(), rankEnv+"="+argSets[0])
		return cmd
	case len(argSets) == 1:
		cmd = exec.CommandContext(ctx, "mpirun", append(append(launch, "-np", strconv.Itoa(np), "-x", rankEnv), self...)...)
		cmd.Env = append(os.Environ(), rankEnv+"="+argSets[0])
	default: // one rank per argument set, each with its own environment
		a := launch
		for i, s := range argSets {
			if i > 0 {
				a = append(a, ":")
			}
			a = append(a, "-np", "1", "-x", rankEnv+"="+s)
			a = append(a, self...)
		}
		cmd = exec.CommandContext(ctx, "mpirun", a...)
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
	return cmd
}

// The default MNIST config with every stochastic part on; evaluation on 500
// images keeps the tests short without touching the training math.
const stochastic = "-set mixup.mixup_alpha=0.8 -set mixup.cutmix_alpha=1.0 -set model.drop_path_rate=0.1 -set model.dropout=0.1 -set data.limit_val=500 -set data.workers=1"

func defaultArgs(out string, steps int) string {
	return fmt.Sprintf("-config ../../configs/mnist_vit_tiny.yaml %s -set train.threads=1 -set train.max_steps=%d -out %s", stochastic, steps, out)
}

// weights reads a run's last.safetensors.
func weights(t *testing.T, dir string) map[string][]float32 {
	t.Helper()
	f, err := safetensors.ReadFile(filepath.Join(dir, train.LastModel))
	if err != nil {
		t.Fatal(err)
	}
	w := map[string][]float32{}
	for _, ts := range f.Tensors {
		if w[ts.Name], err = ts.Float32(); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// relDiff is the largest, over tensors, of max|a−b| / max|a|, and that tensor.
func relDiff(t *testing.T, a, b map[string][]float32) (float64, string) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%d vs %d tensors", len(a), len(b))
	}
	worst, at := 0.0, ""
	for name, va := range a {
		vb, ok := b[name]
		if !ok || len(vb) != len(va) {
			t.Fatalf("%s missing or resized", name)
		}
		var d, m float64
		for i := range va {
			d = math.Max(d, math.Abs(float64(va[i])-float64(vb[i])))
			m = math.Max(m, math.Abs(float64(va[i])))
		}
		if m > 0 && d/m > worst {
			worst, at = d/m, name
		}
	}
	return worst, at
}

func runCmd(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, out)
	}
	return string(out)
}

// TestMPIDefaultConfig20Steps: 20 steps of the default MNIST config with
// Mixup, CutMix, drop path and dropout on, through mpirun on 2 ranks, leave
// the weights one process leaves, to float32 summation order (≤ 1e-4
// relative per tensor).
func TestMPIDefaultConfig20Steps(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dir := t.TempDir()
	one, two := filepath.Join(dir, "one"), filepath.Join(dir, "two")
	runCmd(t, mpiCmd(t, ctx, 0, 0, defaultArgs(one, 20)))
	out := runCmd(t, mpiCmd(t, ctx, 2, 0, defaultArgs(two, 20)))
	d, at := relDiff(t, weights(t, one), weights(t, two))
	t.Logf("1 rank vs 2 ranks after 20 steps: relative max |Δ| %.3g (%s)", d, at)
	if d > 1e-4 {
		t.Fatalf("relative max |Δ| %.3g at %s exceeds 1e-4", d, at)
	}
	if d == 0 {
		t.Fatal("bit-identical weights: the 2-rank run cannot have summed its gradients over ranks")
	}
	if strings.Count(out, "training ") > 1 {
		t.Errorf("more than one rank logged at info level:\n%s", out)
	}
}

// rankPIDs returns the PIDs of the processes whose environment says they
// are rank r of an Open MPI job started under parent.
func rankPID(t *testing.T, parent, r int) int {
	t.Helper()
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(f) < 2 || f[1] != strconv.Itoa(parent) {
			continue
		}
		env, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if bytes.Contains(env, []byte("\x00OMPI_COMM_WORLD_RANK="+strconv.Itoa(r)+"\x00")) {
			return pid
		}
	}
	return 0
}

// startLong starts a 2-rank job that would train for a long time, and
// waits until rank 0 has written a checkpoint.
func startLong(t *testing.T, ctx context.Context, out string, grace int) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	// Thousands of epochs: the run cannot end on its own before a test's
	// signal and Open MPI's grace period (grace s) have run their course.
	args := defaultArgs(out, 100000) + " -set train.epochs=5000 -set checkpoint.every_steps=5 -set data.limit_train=2048"
	cmd := mpiCmd(t, ctx, 2, grace, args)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(out, train.LastState)); err == nil {
			return cmd, &buf
		}
		if ctx.Err() != nil {
			cmd.Process.Kill()
			t.Fatalf("no checkpoint appeared:\n%s", buf.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestMPIKilledRankEndsJob: kill -9 of one rank ends the job with a
// non-zero status (by itself, before the test's bound), and -resume
// continues from the last checkpoint.
func TestMPIKilledRankEndsJob(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	out := filepath.Join(t.TempDir(), "run")
	cmd, buf := startLong(t, ctx, out, 0)
	pid := rankPID(t, cmd.Process.Pid, 1)
	if pid == 0 {
		cmd.Process.Kill()
		t.Fatal("rank 1 not found among mpirun's children")
	}
	killed := time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	took := time.Since(killed)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() == 0 {
		t.Fatalf("job with a killed rank: %v, want a non-zero status\n%s", err, buf.String())
	}
	if ctx.Err() != nil {
		t.Fatalf("the job did not end by itself after rank 1 was killed:\n%s", buf.String())
	}
	t.Logf("killed rank 1: the job ended with status %d after %v", ee.ExitCode(), took.Round(10*time.Millisecond))
	st, err := train.LoadState(filepath.Join(out, train.LastState))
	if err != nil {
		t.Fatal(err)
	}
	// The messages say only what happened: no promise of a checkpoint on
	// the signal mpirun sends, and a checkpoint reported only once written.
	if strings.Contains(buf.String(), "with a checkpoint") {
		t.Fatalf("a message promises a checkpoint:\n%s", buf.String())
	}
	if m := stoppedAt.FindStringSubmatch(buf.String()); m != nil && m[1] != strconv.Itoa(st.Step) {
		t.Fatalf("the log reports a checkpoint at step %s, the state file is at step %d:\n%s", m[1], st.Step, buf.String())
	}
	resumed := runCmd(t, mpiCmd(t, ctx, 2, 0, defaultArgs(out, st.Step+3)+" -set train.epochs=5000 -set data.limit_train=2048 -resume"))
	if !strings.Contains(resumed, "resumed") {
		t.Fatalf("resume did not say so:\n%s", resumed)
	}
}

var stoppedAt = regexp.MustCompile(`training interrupted at step (\d+)`)

// TestMPISIGINTStopsAllRanks: a signal stops both ranks at one step
// boundary, rank 0 writes last.* of that step, and the job ends non-zero.
// SIGINT to mpirun reaches the ranks as SIGTERM after Open MPI's
// odls_base_sigkill_timeout, and SIGKILL as long again after that: a window
// Open MPI times, not the test, for the ranks to finish a step and write
// the checkpoint. It is raised to 30 s here (the default is 1 s), a bound
// that no step under load comes near; SIGTERM to one rank stops the job at
// once.
func TestMPISIGINTStopsAllRanks(t *testing.T) {
	for _, tc := range []struct {
		name string
		sig  func(mpirun int) error
	}{
		{"SIGINT to mpirun", func(mpirun int) error { return syscall.Kill(mpirun, syscall.SIGINT) }},
		{"SIGTERM to rank 1", func(mpirun int) error { return syscall.Kill(rankPID(t, mpirun, 1), syscall.SIGTERM) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			out := filepath.Join(t.TempDir(), "run")
			cmd, buf := startLong(t, ctx, out, 30)
			signalled := time.Now()
			if err := tc.sig(cmd.Process.Pid); err != nil {
				cmd.Process.Kill()
				t.Fatal(err)
			}
			err := cmd.Wait()
			t.Logf("%s: the job ended after %v", tc.name, time.Since(signalled).Round(10*time.Millisecond))
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() == 0 {
				t.Fatalf("%v, want a non-zero status\n%s", err, buf.String())
			}
			steps := stoppedAt.FindAllStringSubmatch(buf.String(), -1)
			if len(steps) != 2 || steps[0][1] != steps[1][1] {
				t.Fatalf("want both ranks to stop at one step, got %v:\n%s", steps, buf.String())
			}
			st, err := train.LoadState(filepath.Join(out, train.LastState))
			if err != nil {
				t.Fatal(err)
			}
			if strconv.Itoa(st.Step) != steps[0][1] {
				t.Fatalf("last.train.safetensors is at step %d, the ranks stopped at %s", st.Step, steps[0][1])
			}
		})
	}
}

// TestMPIBadInputAbortsJob: a rank whose data is missing (here rank 1's
// data.root lacks the training images) ends the whole job, quickly and with
// that rank's message, instead of leaving rank 0 waiting.
func TestMPIBadInputAbortsJob(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	mnist, err := data.LocateMNIST()
	if err != nil {
		t.Skip(err)
	}
	broken := t.TempDir()
	ents, err := os.ReadDir(mnist)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "train-images") {
			if err := os.Symlink(filepath.Join(mnist, e.Name()), filepath.Join(broken, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	out := filepath.Join(t.TempDir(), "run")
	good := defaultArgs(out, 20) + " -set data.root=" + mnist
	bad := defaultArgs(out, 20) + " -set data.root=" + broken
	start := time.Now()
	b, err := mpiCmd(t, ctx, 2, 0, good, bad).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() == 0 {
		t.Fatalf("a rank without data: %v, want a non-zero status\n%s", err, b)
	}
	if !strings.Contains(string(b), "rank 1") || !strings.Contains(string(b), broken) {
		t.Fatalf("the output does not carry rank 1's message about %s:\n%s", broken, b)
	}
	t.Logf("ended with status %d after %v", ee.ExitCode(), time.Since(start).Round(10*time.Millisecond))
}

// TestMPIRanksRefuseDifferentConfigs: a rank started with an extra -set
// (it used to train silently) or another depth (it used to end in
// MPI_ERR_TRUNCATE) ends every rank with status 1 and a message naming the
// rank and the first differing key, at start-up.
func TestMPIRanksRefuseDifferentConfigs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	for _, tc := range []struct{ extra, key string }{
		{"-set optim.lr=0.5", "optim.lr"},
		{"-set model.depth=7", "model.depth"},
	} {
		out := filepath.Join(t.TempDir(), "run")
		b, err := mpiCmd(t, ctx, 2, 0, defaultArgs(out, 5), defaultArgs(out, 5)+" "+tc.extra).CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Fatalf("%s on rank 1: %v, want status 1\n%s", tc.extra, err, b)
		}
		msg := "rank 1 was started with a config that differs from rank 0's at " + tc.key
		if n := strings.Count(string(b), msg); n != 2 {
			t.Fatalf("%s on rank 1: %d ranks say %q, want both:\n%s", tc.extra, n, msg, b)
		}
		if _, err := os.Stat(filepath.Join(out, train.ConfigFile)); err == nil {
			t.Fatalf("%s on rank 1: the refused job wrote %s", tc.extra, train.ConfigFile)
		}
	}
}

// TestMPIResumeOfFinishedRun: -resume of a complete run ends every rank
// with status 0 at once (rank 0 used to exit alone while the others waited
// for the watchdog, status 3).
func TestMPIResumeOfFinishedRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	out := filepath.Join(t.TempDir(), "run")
	runCmd(t, mpiCmd(t, ctx, 2, 0, defaultArgs(out, 2)))
	cmd := mpiCmd(t, ctx, 2, 0, defaultArgs(out, 2)+" -resume")
	cmd.Env = append(cmd.Env, "VIT_DIST_TIMEOUT=2m") // a hang shows as status 3 within the test's limit
	b := runCmd(t, cmd)
	if strings.Count(b, "the run is complete") < 1 {
		t.Fatalf("no completion message:\n%s", b)
	}
}

// TestMPIRanksRefuseOtherData: a rank whose data.root (a per-rank key)
// holds Fashion-MNIST beside ranks on MNIST, under the same data.name, used
// to train with exit 0; now every rank ends with status 1 and a message
// naming data.root, the split and the rank, before step 1.
func TestMPIRanksRefuseOtherData(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	mnist, err := data.LocateMNIST()
	if err != nil {
		t.Skip(err)
	}
	fashion, err := data.LocateFashionMNIST()
	if err != nil {
		t.Skip(err)
	}
	out := filepath.Join(t.TempDir(), "run")
	b, err := mpiCmd(t, ctx, 2, 0, defaultArgs(out, 5)+" -set data.root="+mnist, defaultArgs(out, 5)+" -set data.root="+fashion).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("Fashion-MNIST on rank 1: %v, want status 1\n%s", err, b)
	}
	msg := "rank(s) 1 hold other files than rank 0 at data.root (train split)"
	if n := strings.Count(string(b), msg); n != 2 || !strings.Contains(string(b), fashion) {
		t.Fatalf("%d ranks say %q naming %s, want both:\n%s", n, msg, fashion, b)
	}
	if _, err := os.Stat(filepath.Join(out, train.LastState)); err == nil {
		t.Fatalf("the refused job trained and wrote %s", train.LastState)
	}
}

// TestMPIRanksRefuseOtherTeacher: ranks started in other working
// directories read other files under one relative distill.teacher (equal
// as text in every rank's config); every rank ends with status 1 and a
// message naming distill.teacher and the rank, before step 1.
func TestMPIRanksRefuseOtherTeacher(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	config, err := filepath.Abs("../../configs/mnist_vit_tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	args := func(out string, steps int) string {
		return strings.Replace(defaultArgs(out, steps), "../../configs/mnist_vit_tiny.yaml", config, 1)
	}
	// Two teachers: one step of two seeds, each in its own directory.
	var dirs [2]string
	for i := range dirs {
		out := filepath.Join(t.TempDir(), "teacher")
		runCmd(t, mpiCmd(t, ctx, 0, 0, args(out, 1)+fmt.Sprintf(" -set train.seed=%d", i+1)))
		dirs[i] = t.TempDir()
		raw, err := os.ReadFile(filepath.Join(out, train.LastModel))
		if err == nil {
			err = os.WriteFile(filepath.Join(dirs[i], "teacher.safetensors"), raw, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "run")
	student := args(out, 5) + " -set model.distilled=true -set distill.type=hard -set distill.teacher=teacher.safetensors"
	cmd := mpiCmd(t, ctx, 2, 0, student, student)
	// Each rank group in its own working directory (mpirun's -wdir).
	var a []string
	group := 0
	for _, s := range cmd.Args[1:] {
		if s == "-np" {
			a = append(a, "-wdir", dirs[group])
			group++
		}
		a = append(a, s)
	}
	cmd.Args = append(cmd.Args[:1], a...)
	b, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("another teacher on rank 1: %v, want status 1\n%s", err, b)
	}
	msg := "rank(s) 1 hold other files than rank 0 at distill.teacher"
	if n := strings.Count(string(b), msg); n != 2 {
		t.Fatalf("%d ranks say %q, want both:\n%s", n, msg, b)
	}
	if _, err := os.Stat(filepath.Join(out, train.LastState)); err == nil {
		t.Fatalf("the refused job trained and wrote %s", train.LastState)
	}
}

// TestMPIOptimizersResume: each optimizer other than AdamW (optim.opt) with
// layer decay, the EMA, a frozen patch embedding and two micro-batches,
// trained on 2 ranks through mpirun, stopped and resumed on 2 ranks (rank
// 0's optimizer slots broadcast), leaves the weights one process leaves
// after the same steps, to float32 summation order.
func TestMPIOptimizersResume(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	for _, opt := range []string{"sgd", "momentum", "lamb"} {
		t.Run(opt, func(t *testing.T) {
			extra := " -set optim.opt=" + opt + " -set optim.layer_decay=0.75 -set optim.ema=true -set finetune.freeze=[patch_embed.*] -set train.grad_accum_steps=2"
			dir := t.TempDir()
			one, two := filepath.Join(dir, "one"), filepath.Join(dir, "two")
			runCmd(t, mpiCmd(t, ctx, 0, 0, defaultArgs(one, 6)+extra))
			runCmd(t, mpiCmd(t, ctx, 2, 0, defaultArgs(two, 3)+extra))
			runCmd(t, mpiCmd(t, ctx, 2, 0, defaultArgs(two, 6)+extra+" -resume"))
			d, at := relDiff(t, weights(t, one), weights(t, two))
			t.Logf("%s: 1 rank vs 2 ranks stopped and resumed, after 6 steps: relative max |Δ| %.3g (%s)", opt, d, at)
			if d > 1e-4 || d == 0 {
				t.Fatalf("relative max |Δ| %.3g at %s: want (0, 1e-4]", d, at)
			}
		})
	}
}
