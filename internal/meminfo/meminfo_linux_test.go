package meminfo

import (
	"syscall"
	"testing"
)

// TestMemoryFreeUnderRlimit: Free reads RLIMIT_AS and RLIMIT_DATA (the
// limits `ulimit -v` and `ulimit -d` set), less what the process already
// uses of them and a headroom, and returns no more than either leaves; a
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
			want := limit - procStatus()[tc.status] - headroom(limit)
			var got *Limit
			for _, l := range rlimits() {
				if l.Source == tc.source {
					got = &l
				}
			}
			if got == nil || got.Limit != limit || got.Free > want+(16<<20) || got.Free < want-(16<<20) {
				t.Fatalf("rlimits() has %+v for %q; want about %d free of %d", got, tc.source, want, limit)
			}
			// Free is the smallest of every limit (another, such as CI's
			// ulimit -v, may be lower still).
			if have, _ := Free(); have > got.Free {
				t.Fatalf("Free() = %d, more than the %d that %s leaves", have, got.Free, tc.source)
			}
		})
	}
}
