package kernels

import (
	"runtime"
	"testing"
)

// TestSizedPool: a request takes a buffer of its class's size (n rounded
// up to an eighth of its power of two), comes back with the requested
// length, and a buffer put back is what the next request of its class gets,
// from any goroutine, without allocating; a class keeps at most
// sizedPoolKeep buffers.
func TestSizedPool(t *testing.T) {
	var p sizedPool[uint32]
	for _, tc := range []struct{ n, size int }{
		{0, 1}, {1, 1}, {8, 8}, {9, 9}, {16, 16}, {17, 18}, {1000, 1024}, {1024, 1024}, {1025, 1152},
		{1 << 20, 1 << 20}, {1<<20 + 1, 1<<20 + 1<<17}, {9_700_000, 10_485_760},
	} {
		if c := classSize(tc.n); c != tc.size || c < tc.n || (tc.n > 8 && 8*(c-tc.n) > c) {
			t.Errorf("classSize(%d) = %d, want %d", tc.n, c, tc.size)
		}
		buf := p.get(tc.n)
		if len(*buf) != tc.n || cap(*buf) != tc.size {
			t.Errorf("get(%d): len %d cap %d, want len %d cap %d", tc.n, len(*buf), cap(*buf), tc.n, tc.size)
		}
		done := make(chan struct{})
		go func() { p.put(buf); close(done) }()
		<-done
		if again := p.get(tc.size); again != buf || len(*again) != tc.size {
			t.Errorf("get(%d) after put: another buffer, or len %d", tc.size, len(*again))
		}
	}
	if n := testing.AllocsPerRun(10, func() { p.put(p.get(1000)) }); n != 0 {
		t.Errorf("get after put: %v allocations", n)
	}
	var bufs []*[]uint32
	for range sizedPoolKeep() + 3 {
		bufs = append(bufs, p.get(500))
	}
	for _, b := range bufs {
		p.put(b)
	}
	if k := len(p.free[classSize(500)]); k != sizedPoolKeep() {
		t.Errorf("a class keeps %d buffers, want %d (GOMAXPROCS %d)", k, sizedPoolKeep(), runtime.GOMAXPROCS(0))
	}
}
