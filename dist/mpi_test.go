//go:build mpi

package dist

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// helperVar marks a test process started by mpirun as one rank of a job.
const helperVar = "VIT_DIST_HELPER"

// mpirun runs this test binary's test named run as np ranks and returns the
// combined output and the error of the run. A job still running after five
// minutes (a bound only, so that a hung job cannot hang the test) is killed
// and fails the test.
func mpirun(t *testing.T, np int, run string, env ...string) (string, error) {
	t.Helper()
	if _, err := exec.LookPath("mpirun"); err != nil {
		t.Skip("mpirun not installed (scripts/setup.sh installs Open MPI)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "mpirun", "--oversubscribe", "-np", strconv.Itoa(np), os.Args[0], "-test.run=^"+run+"$", "-test.v")
	cmd.Env = append(os.Environ(), append(env, helperVar+"=1", "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")...)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("mpirun -np %d %s did not end by itself:\n%s", np, run, out)
	}
	return string(out), err
}

// TestMPICollectives runs TestMPIRank on 3 ranks through mpirun.
func TestMPICollectives(t *testing.T) {
	if os.Getenv(helperVar) != "" {
		t.Skip("inside mpirun")
	}
	out, err := mpirun(t, 3, "TestMPIRank")
	if err != nil || strings.Count(out, "--- PASS: TestMPIRank") != 3 {
		t.Fatalf("mpirun -np 3: %v\n%s", err, out)
	}
}

// TestMPIRank is one rank's side of TestMPICollectives.
func TestMPIRank(t *testing.T) {
	if os.Getenv(helperVar) == "" {
		t.Skip("runs under mpirun only")
	}
	c, err := Init()
	if err != nil {
		t.Fatal(err)
	}
	defer Finalize()
	n, r := c.Size(), c.Rank()
	if n != 3 {
		t.Fatalf("size %d, want 3", n)
	}
	f32, f64, i64 := []float32{float32(r), 0.5}, []float64{float64(r)}, []int64{int64(r) << 40}
	if err := errors.Join(c.AllreduceFloat32(f32), c.AllreduceFloat64(f64), c.AllreduceInt64(i64)); err != nil {
		t.Fatal(err)
	}
	if f32[0] != 3 || f32[1] != 1.5 || f64[0] != 3 || i64[0] != 3<<40 {
		t.Fatalf("rank %d: sums %v %v %v", r, f32, f64, i64)
	}
	b, w, k := []byte{byte(r)}, []float32{float32(r)}, []int64{int64(r)}
	if err := errors.Join(c.BcastBytes(b, 2), c.BcastFloat32(w, 2), c.BcastInt64(k, 2), c.Barrier()); err != nil {
		t.Fatal(err)
	}
	if b[0] != 2 || w[0] != 2 || k[0] != 2 {
		t.Fatalf("rank %d: bcast from 2 gave %v %v %v", r, b, w, k)
	}
	var re *RootError
	if err := c.BcastBytes(b, 3); !errors.As(err, &re) {
		t.Fatalf("root 3 of 3: %v", err)
	}
	if m, err := AllreduceMax(c, int64(r)); m != 2 || err != nil {
		t.Fatalf("AllreduceMax = %d, %v", m, err)
	}
}

// TestCollectiveWatchdog: a rank stuck outside MPI (here for good) leaves
// the others in a collective; the watchdog ends the job. The stuck rank
// never joins, so the short timeout races nothing: it only sets how soon
// the job ends.
func TestCollectiveWatchdog(t *testing.T) {
	if os.Getenv(helperVar) != "" {
		t.Skip("inside mpirun")
	}
	out, err := mpirun(t, 2, "TestMPIStuckRank", TimeoutVar+"=2s")
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() == 0 {
		t.Fatalf("job with a stuck rank: %v, want a non-zero exit\n%s", err, out)
	}
	if !strings.Contains(out, "has waited") {
		t.Fatalf("job ended without the watchdog's message:\n%s", out)
	}
}

// TestMPIStuckRank is the ranks' side of TestCollectiveWatchdog.
func TestMPIStuckRank(t *testing.T) {
	if os.Getenv(helperVar) == "" {
		t.Skip("runs under mpirun only")
	}
	c, err := Init()
	if err != nil {
		t.Fatal(err)
	}
	if c.Rank() == 1 {
		for { // stuck: never joins the barrier; the job's end kills it
			time.Sleep(time.Hour)
		}
	}
	_ = c.Barrier()
	t.Fatal("the barrier returned without rank 1")
}
