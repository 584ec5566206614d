package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"

	"github.com/vitgo/vit/experiments/internal/harness"
)

// childEnv carries a job (JSON) to a re-executed copy of this binary.
const childEnv = "VIT_BENCH_CHILD"

// The child's modes.
const (
	modeSteps = "steps" // training steps and eval forwards → stepsResult
	modeFloor = "floor" // the SGEMM calls of one step, alone → floorResult
)

// job is one measurement, run in a child process.
type job struct {
	Mode       string `json:"mode"`
	Config     string `json:"config"`
	Steps      int    `json:"steps"`
	Threads    int    `json:"threads"`
	Batch      int    `json:"batch"`
	Warmup     int    `json:"warmup"` // untimed steps before the timed ones
	Seed       uint64 `json:"seed"`
	CPUProfile string `json:"cpu_profile,omitempty"`
}

// runChild runs j in a fresh process of this binary (GOMAXPROCS = threads)
// and decodes its result line into out; rssKiB, if not nil, receives the
// child's peak resident set (rusage ru_maxrss, KiB).
func runChild(j job, out any, rssKiB *int64) error {
	spec, err := json.Marshal(j)
	if err != nil {
		return err
	}
	exe, err := harness.Self()
	if err != nil {
		return err
	}
	rss, err := harness.RunResult(exec.Command(exe), harness.ResultPrefix, out,
		childEnv+"="+string(spec), "GOMAXPROCS="+strconv.Itoa(j.Threads))
	if err != nil {
		return fmt.Errorf("child %s: %w", j.Mode, err)
	}
	if rssKiB != nil {
		*rssKiB = rss
	}
	return nil
}

// child runs the job in spec and returns its result.
func child(spec string) (any, error) {
	var j job
	if err := json.Unmarshal([]byte(spec), &j); err != nil {
		return nil, fmt.Errorf("%s: %w", childEnv, err)
	}
	bc, ok := benchConfigs[j.Config]
	if !ok {
		return nil, fmt.Errorf("%s: unknown config %q", childEnv, j.Config)
	}
	runtime.GOMAXPROCS(j.Threads)
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(20) // as cmd/train runs: ops own their buffers, so GC has little to do
	}
	switch j.Mode {
	case modeSteps:
		return measureSteps(bc.model(), j)
	case modeFloor:
		return measureFloor(bc.model(), j)
	case modeScaling:
		return measureScaling(bc.model(), j)
	}
	return nil, fmt.Errorf("%s: unknown mode %q", childEnv, j.Mode)
}

func mib(kib int64) float64 { return float64(kib) / 1024 }
