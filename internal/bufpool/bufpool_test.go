package bufpool

import (
	"fmt"
	"math"
	"runtime"
	"sync"
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
// TestClassIndex: classIndex numbers the classes in order, one index per
// class, every request of a class on its index, all within numClasses.
func TestClassIndex(t *testing.T) {
	prev, prevSize := -1, 0
	check := func(n int) {
		c := ClassSize(n)
		i := classIndex(n)
		switch {
		case i != classIndex(c):
			t.Fatalf("classIndex(%d) = %d, but its class size %d has %d", n, i, c, classIndex(c))
		case i < 0 || i >= numClasses:
			t.Fatalf("classIndex(%d) = %d, outside [0, %d)", n, i, numClasses)
		case c == prevSize && i != prev, c > prevSize && i != prev+1:
			t.Fatalf("classIndex(%d) = %d (size %d) after %d (size %d): want the next index for the next size", n, i, c, prev, prevSize)
		}
		prev, prevSize = i, c
	}
	for n := 1; n <= 1<<16; n++ {
		check(n)
	}
	if i := classIndex(math.MaxInt); i != numClasses-1 {
		t.Errorf("classIndex(MaxInt) = %d, want the last index %d", i, numClasses-1)
	}
}

// TestPoolConcurrent: goroutines on every core take and give back buffers
// of a few classes at once; no buffer is lent to two at the same time
// (each writes its mark through and finds it unchanged), and a foreign
// capacity is never kept. go test -race checks the slots' ordering.
func TestPoolConcurrent(t *testing.T) {
	var p Pool[int]
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range 2000 {
				n := 100 + (it%3)*50
				buf := p.Get(n)
				for i := range *buf {
					(*buf)[i] = g
				}
				runtime.Gosched()
				for i, v := range *buf {
					if v != g {
						errs <- fmt.Errorf("goroutine %d: element %d of a buffer it holds is %d", g, i, v)
						return
					}
				}
				p.Put(buf)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	odd := make([]int, 10, 1000) // 1000 is not a class size (ClassSize(1000) = 1024)
	p.Put(&odd)
	if got := p.Get(1000); cap(*got) != 1024 {
		t.Errorf("Get(1000) after a Put of capacity 1000: capacity %d, want 1024", cap(*got))
	}
}

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
