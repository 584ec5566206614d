package meminfo

import (
	"runtime/metrics"
	"syscall"
)

// rlimits are the address-space and data-segment limits of this process
// (RLIMIT_AS, as `ulimit -v` sets it, and RLIMIT_DATA), each less what the
// process already has of it (VmSize and VmData of /proc/self/status: the Go
// runtime reserves address space ahead of its heap, and all of it counts)
// and less the headroom the runtime needs to grow at all. The heap the Go
// runtime holds free (mapped, so counted in VmSize and VmData, but reused
// before the heap grows) is added back: a process that trained or decoded
// before keeps its mappings, and they are not taken.
func rlimits() []Limit {
	status := procStatus()
	idle := heapIdle()
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
		used := max(status[r.status]-idle, 0)
		out = append(out, Limit{Free: max(cur-used-headroom(cur), 1), Source: r.name, Limit: cur})
	}
	return out
}

// rlimInfinity is RLIM_INFINITY on Linux.
const rlimInfinity = ^uint64(0)

// heapIdle is the heap the Go runtime has mapped but holds free, in use by
// no object: free spans and spans returned to the kernel (still mapped).
func heapIdle() int64 {
	m := []metrics.Sample{{Name: "/memory/classes/heap/free:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(m)
	var n int64
	for _, s := range m {
		if s.Value.Kind() == metrics.KindUint64 {
			n += int64(s.Value.Uint64())
		}
	}
	return n
}
