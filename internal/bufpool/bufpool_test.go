package bufpool

import (
	"fmt"
	"runtime"
	"testing"
)

// TestPool: a request takes a buffer of its class's size (n rounded up to
// an eighth of its power of two), comes back with the requested length,
// and a buffer put back is what the next request of its class gets, from
// any goroutine, without allocating; a class keeps at most Keep() buffers.
func TestPool(t *testing.T) {
	var p Pool[uint32]
	for _, tc := range []struct{ n, size int }{
		{0, 1}, {1, 1}, {8, 8}, {9, 9}, {16, 16}, {17, 18}, {1000, 1024}, {1024, 1024}, {1025, 1152},
		{1 << 20, 1 << 20}, {1<<20 + 1, 1<<20 + 1<<17}, {9_700_000, 10_485_760},
	} {
		if c := ClassSize(tc.n); c != tc.size || c < tc.n || (tc.n > 8 && 8*(c-tc.n) > c) {
			t.Errorf("ClassSize(%d) = %d, want %d", tc.n, c, tc.size)
		}
		buf := p.Get(tc.n)
		if len(*buf) != tc.n || cap(*buf) != tc.size {
			t.Errorf("Get(%d): len %d cap %d, want len %d cap %d", tc.n, len(*buf), cap(*buf), tc.n, tc.size)
		}
		done := make(chan struct{})
		go func() { p.Put(buf); close(done) }()
		<-done
		if again := p.Get(tc.size); again != buf || len(*again) != tc.size {
			t.Errorf("Get(%d) after Put: another buffer, or len %d", tc.size, len(*again))
		}
	}
	if n := testing.AllocsPerRun(10, func() { p.Put(p.Get(1000)) }); n != 0 {
		t.Errorf("Get after Put: %v allocations", n)
	}
	var bufs []*[]uint32
	for range Keep() + 3 {
		bufs = append(bufs, p.Get(500))
	}
	for _, b := range bufs {
		p.Put(b)
	}
	if k := p.kept(ClassSize(500)); k != Keep() {
		t.Errorf("a class keeps %d buffers, want %d (GOMAXPROCS %d)", k, Keep(), runtime.GOMAXPROCS(0))
	}
}

// A scratch buffer borrowed for one call and given back: the next request
// of its class, from any goroutine, gets the same memory.
func ExamplePool() {
	var scratch Pool[float32]
	buf := scratch.Get(1000)
	fmt.Println(len(*buf), cap(*buf))
	scratch.Put(buf)
	again := scratch.Get(1024)
	fmt.Println(again == buf, len(*again))
	// Output:
	// 1000 1024
	// true 1024
}
