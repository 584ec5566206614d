// Package meminfo reads how much memory this process may still use, from
// /proc/meminfo, the cgroup limits and the process's resource limits;
// internal/memory's checks and the data package's decode budget share it.
package meminfo

import (
	"bufio"
	"bytes"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
)

// Limit is one bound on the memory this process may still take.
type Limit struct {
	Free   int64  // bytes still free under it
	Source string // where it comes from
	Limit  int64  // the limit itself, for a resource limit; 0 otherwise
}

// Free returns the memory this process may still take by every limit it
// has: the smallest of Available (MemAvailable, the cgroup v1 or v2 limit
// less its usage) and of the resource limits RLIMIT_AS (`ulimit -v`) and
// RLIMIT_DATA less the process's current address space (VmSize) and data
// (VmData), which keep a headroom for the runtime (an eighth of the
// limit, at least 64 MiB). 0 when none can be read.
func Free() (int64, string) {
	l := Tightest()
	return l.Free, l.Source
}

// Tightest is the limit that Free reports: its Limit is set when it is a
// resource limit (RLIMIT_AS or RLIMIT_DATA), which the kernel enforces by
// failing the allocation, and 0 for MemAvailable or the cgroup. Free is 0
// when none can be read.
func Tightest() Limit {
	var t Limit
	t.Free, t.Source = Available()
	for _, l := range rlimits() {
		if t.Free <= 0 || l.Free < t.Free {
			t = l
		}
	}
	return t
}

// headroom is what a resource limit of limit bytes keeps free for the
// runtime beyond what Free reports: an eighth of it, at least 64 MiB (one
// heap arena of the Go runtime).
func headroom(limit int64) int64 { return max(limit/8, 64<<20) }

// LimitRuntime sets the Go runtime's soft memory limit (debug.SetMemoryLimit)
// from the process's resource limits when GOMEMLIMIT does not set one: the
// memory the runtime has mapped now plus what RLIMIT_AS and RLIMIT_DATA
// leave free. Under `ulimit -v` the collector then works harder as the limit
// nears instead of growing the heap into an out-of-memory crash. It
// returns the limit set, 0 when none was.
func LimitRuntime() int64 {
	if os.Getenv("GOMEMLIMIT") != "" {
		return 0
	}
	free := int64(0)
	for _, l := range rlimits() {
		if free == 0 || l.Free < free {
			free = l.Free
		}
	}
	if free == 0 {
		return 0
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	limit := int64(ms.Sys-ms.HeapReleased) + free
	debug.SetMemoryLimit(limit)
	return limit
}

// procStatus reads the sizes (in bytes) of /proc/self/status: VmSize,
// VmData, ….
func procStatus() map[string]int64 {
	out := map[string]int64{}
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return out
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 3 && f[2] == "kB" {
			if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				out[f[0]] = kb << 10
			}
		}
	}
	return out
}

// Available returns the memory this process may still use: the
// smaller of /proc/meminfo's MemAvailable and the cgroup's limit minus its
// usage (cgroup v2 memory.max/memory.current, or v1's
// memory.limit_in_bytes/usage_in_bytes), and where it comes from. 0 when
// neither can be read.
func Available() (int64, string) {
	have, source := int64(0), ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
				f := strings.Fields(rest)
				if len(f) >= 1 {
					if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil {
						have, source = kb<<10, "/proc/meminfo MemAvailable"
					}
				}
			}
		}
	}
	for _, p := range [][2]string{
		{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"},
		{"/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"},
	} {
		limit, ok1 := readInt(p[0])
		used, ok2 := readInt(p[1])
		if ok1 && ok2 && limit > 0 && limit < 1<<60 {
			if free := limit - used; have == 0 || free < have {
				have, source = max(free, 1), "cgroup limit "+p[0]
			}
			break
		}
	}
	return have, source
}

func readInt(path string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n, err == nil
}
