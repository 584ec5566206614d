// Package meminfo reads how much memory this process may still use, from
// /proc/meminfo and the cgroup limits; internal/memory's checks and the
// data package's decode budget share it.
package meminfo

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
)

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
