package meminfo

import (
	"syscall"
	"testing"
)

// TestMemoryFreeUnderRlimit: Free reads RLIMIT_AS and RLIMIT_DATA (the
// limits `ulimit -v` and `ulimit -d` set), less what the process already
// uses of them and a headroom, and reports the smaller source; a
// MemAvailable or cgroup figure larger than the limit does not hide it.
func TestMemoryFreeUnderRlimit(t *testing.T) {
	for _, tc := range []struct {
		res    int
		status string
		source string
	}{
		{syscall.RLIMIT_AS, "VmSize:", "RLIMIT_AS (ulimit -v) less VmSize"},
		{syscall.RLIMIT_DATA, "VmData:", "RLIMIT_DATA (ulimit -d) less VmData"},
	} {
		t.Run(tc.source, func(t *testing.T) {
			var old syscall.Rlimit
			if err := syscall.Getrlimit(tc.res, &old); err != nil {
				t.Skip(err)
			}
			used := procStatus()[tc.status]
			if used == 0 {
				t.Skipf("no %s in /proc/self/status", tc.status)
			}
			limit := used + 512<<20 // 512 MiB more than in use: below any machine's MemAvailable here
			if old.Cur != rlimInfinity && int64(old.Cur) < limit {
				t.Skipf("the limit is already %d", old.Cur)
			}
			lim := old
			lim.Cur = uint64(limit)
			if err := syscall.Setrlimit(tc.res, &lim); err != nil {
				t.Skip(err)
			}
			defer syscall.Setrlimit(tc.res, &old)
			have, source := Free()
			want := limit - procStatus()[tc.status] - headroom(limit)
			if source != tc.source || have > want+(16<<20) || have < want-(16<<20) {
				t.Fatalf("Free() = %d from %q; want about %d from %q", have, source, want, tc.source)
			}
		})
	}
}
