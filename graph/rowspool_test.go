package graph

import "testing"

// TestRowsPool: get reuses what put gave back (from any goroutine, without
// allocating), picks the smallest buffer that fits, and put keeps at most
// rowsPoolKeep buffers, dropping the smallest.
func TestRowsPool(t *testing.T) {
	var p rowsPool[float32]
	a := p.get(100)
	if len(*a) != 100 {
		t.Fatalf("get(100): len %d", len(*a))
	}
	done := make(chan struct{})
	go func() { p.put(a); close(done) }()
	<-done
	if n := testing.AllocsPerRun(10, func() { p.put(p.get(80)) }); n != 0 {
		t.Errorf("get after put: %v allocations", n)
	}
	if b := p.get(100); b != a {
		t.Errorf("get(100) did not return the buffer put back")
	}
	var bufs []*[]float32
	for _, n := range []int{10, 50, 20, 40, 30} {
		bufs = append(bufs, p.get(n))
	}
	for _, b := range bufs {
		p.put(b)
	}
	if len(p.free) != rowsPoolKeep {
		t.Fatalf("%d buffers kept, want %d", len(p.free), rowsPoolKeep)
	}
	for _, f := range p.free {
		if cap(*f) == 10 {
			t.Errorf("the smallest buffer (10) was kept")
		}
	}
	if b := p.get(25); cap(*b) != 30 {
		t.Errorf("get(25) gave a buffer of %d, want the smallest that fits (30)", cap(*b))
	}
}
