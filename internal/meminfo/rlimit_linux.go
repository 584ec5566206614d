package meminfo

import (
	"syscall"
)

// rlimits are the address-space and data-segment limits of this process
// (RLIMIT_AS, as `ulimit -v` sets it, and RLIMIT_DATA), each less what the
// process already has of it (VmSize and VmData of /proc/self/status: the Go
// runtime reserves address space ahead of its heap, and all of it counts)
// and less the headroom the runtime needs to grow at all.
func rlimits() []Limit {
	status := procStatus()
	var out []Limit
	for _, r := range []struct {
		res    int
		name   string
		status string
	}{
		{syscall.RLIMIT_AS, "RLIMIT_AS (ulimit -v) less VmSize", "VmSize:"},
		{syscall.RLIMIT_DATA, "RLIMIT_DATA (ulimit -d) less VmData", "VmData:"},
	} {
		var lim syscall.Rlimit
		if err := syscall.Getrlimit(r.res, &lim); err != nil || lim.Cur == rlimInfinity || lim.Cur >= 1<<62 {
			continue
		}
		cur := int64(lim.Cur)
		used := status[r.status]
		out = append(out, Limit{Free: max(cur-used-headroom(cur), 1), Source: r.name, Limit: cur})
	}
	return out
}

// rlimInfinity is RLIM_INFINITY on Linux.
const rlimInfinity = ^uint64(0)
