package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
)

// childEnv carries a job (JSON) to a re-executed copy of this binary.
const childEnv = "VIT_BENCH_CHILD"

// resultPrefix starts the child's one result line on stdout.
const resultPrefix = "RESULT "

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
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("locate this binary: %w", err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), childEnv+"="+string(spec), "GOMAXPROCS="+strconv.Itoa(j.Threads))
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("child %s: %w", j.Mode, err)
	}
	if err := decodeResult(stdout.Bytes(), resultPrefix, out); err != nil {
		return fmt.Errorf("child %s: %w", j.Mode, err)
	}
	if rssKiB != nil {
		*rssKiB = maxRSS(cmd.ProcessState)
	}
	return nil
}

// decodeResult finds the last line of text starting with prefix and decodes
// the JSON after it into out.
func decodeResult(text []byte, prefix string, out any) error {
	var last string
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, prefix) {
			last = strings.TrimPrefix(line, prefix)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if last == "" {
		return fmt.Errorf("no %q line in its output", strings.TrimSpace(prefix))
	}
	if err := json.Unmarshal([]byte(last), out); err != nil {
		return fmt.Errorf("decode %q line: %w", strings.TrimSpace(prefix), err)
	}
	return nil
}

// maxRSS is a finished process's peak resident set in KiB (Linux reports
// ru_maxrss in KiB); 0 where the platform does not say.
func maxRSS(ps *os.ProcessState) int64 {
	if ps == nil {
		return 0
	}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return int64(ru.Maxrss)
	}
	return 0
}

// childMain runs the job in spec and writes its result line to w.
func childMain(spec string, w io.Writer) error {
	var j job
	if err := json.Unmarshal([]byte(spec), &j); err != nil {
		return fmt.Errorf("%s: %w", childEnv, err)
	}
	bc, ok := benchConfigs[j.Config]
	if !ok {
		return fmt.Errorf("%s: unknown config %q", childEnv, j.Config)
	}
	runtime.GOMAXPROCS(j.Threads)
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(20) // as cmd/train runs: ops own their buffers, so GC has little to do
	}
	var res any
	var err error
	switch j.Mode {
	case modeSteps:
		res, err = measureSteps(bc.model(), j)
	case modeFloor:
		res, err = measureFloor(bc.model(), j)
	case modeScaling:
		res, err = measureScaling(bc.model(), j)
	default:
		return fmt.Errorf("%s: unknown mode %q", childEnv, j.Mode)
	}
	if err != nil {
		return err
	}
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s%s\n", resultPrefix, b)
	return err
}

func mib(kib int64) float64 { return float64(kib) / 1024 }
