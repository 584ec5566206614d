package harness

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// The benchmarks run every measurement in a child process (their own binary
// again, the job in an environment variable), so that its peak RSS and its
// GOMAXPROCS are its own. A child prints its result as one line,
// ResultPrefix followed by JSON.

// ResultPrefix starts a child's result line on stdout.
const ResultPrefix = "RESULT "

// ServeChild returns at once unless the environment variable env is set.
// If it is, this process is a child: ServeChild runs do with its value,
// prints the result (unless nil) as the ResultPrefix line and exits, with
// status 1 after printing the error if do fails.
func ServeChild(env string, do func(job string) (any, error)) {
	job, ok := os.LookupEnv(env)
	if !ok {
		return
	}
	res, err := do(job)
	if err == nil && res != nil {
		var b []byte
		if b, err = json.Marshal(res); err == nil {
			fmt.Printf("%s%s\n", ResultPrefix, b)
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s child: %v\n", filepath.Base(os.Args[0]), err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Self is the path of this binary, to start children with.
func Self() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("locate this binary: %w", err)
	}
	return exe, nil
}

// RunResult runs cmd, with env added to its environment, decodes the last
// line of its stdout that starts with prefix (the JSON after it) into out,
// and returns the process's peak resident set in KiB (rusage ru_maxrss; 0
// where the platform does not say). cmd.Stderr, if nil, is os.Stderr.
func RunResult(cmd *exec.Cmd, prefix string, out any, env ...string) (rssKiB int64, err error) {
	cmd.Env = append(os.Environ(), env...)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if cmd.Stderr == nil {
		cmd.Stderr = os.Stderr
	}
	if err := cmd.Run(); err != nil {
		return 0, err
	}
	return MaxRSS(cmd.ProcessState), DecodeResult(stdout.Bytes(), prefix, out)
}

// MaxRSS is a finished process's peak resident set in KiB (Linux reports
// ru_maxrss in KiB); 0 where the platform does not say.
func MaxRSS(ps *os.ProcessState) int64 {
	if ps == nil {
		return 0
	}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return int64(ru.Maxrss)
	}
	return 0
}

// DecodeResult finds the last line of text starting with prefix and decodes
// the JSON after it into out.
func DecodeResult(text []byte, prefix string, out any) error {
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
	name := strings.TrimSpace(prefix)
	if last == "" {
		return fmt.Errorf("no %q line in its output", name)
	}
	if err := json.Unmarshal([]byte(last), out); err != nil {
		return fmt.Errorf("decode %q line: %w", name, err)
	}
	return nil
}
