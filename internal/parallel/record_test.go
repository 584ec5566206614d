package parallel

import (
	"runtime"
	"testing"
	"time"
)

// Makespan hands the chunks out in order to the first free core, as Run's
// shared counter does: a long last chunk ends the pass late, more cores than
// chunks do not help, and one core takes the sum.
func TestMakespan(t *testing.T) {
	ms := func(v ...int) Pass {
		p := Pass{}
		for _, x := range v {
			p.Chunks = append(p.Chunks, time.Duration(x)*time.Millisecond)
		}
		return p
	}
	for _, tc := range []struct {
		name    string
		pass    Pass
		workers int
		want    int
	}{
		{"even", ms(2, 2, 2, 2), 2, 4},
		{"long first", ms(3, 1, 1, 1), 2, 3},
		{"long last", ms(1, 1, 1, 1, 4), 2, 6}, // in order, not longest first (that would be 4)
		{"more cores than chunks", ms(2, 3), 8, 3},
		{"one core", ms(2, 3, 4), 1, 9},
		{"no core", ms(2, 3), 0, 5},
		{"empty", ms(), 4, 0},
		{"three cores", ms(5, 1, 1, 1, 1, 1, 1), 3, 5},
	} {
		if got := tc.pass.Makespan(tc.workers); got != time.Duration(tc.want)*time.Millisecond {
			t.Errorf("%s: Makespan(%d) = %v, want %d ms", tc.name, tc.workers, got, tc.want)
		}
	}
	if got := ms(1, 2, 3).Total(); got != 6*time.Millisecond {
		t.Errorf("Total = %v, want 6ms", got)
	}
}

// With Record on, Run runs a pass's chunks in order on the calling
// goroutine and reports each chunk's time once the pass is done; a Run
// inside a chunk runs inline as part of it, unreported; stop turns it off.
func TestRecordRunsInlineInOrder(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	var passes []Pass
	stop := Record(func(p Pass) { passes = append(passes, p) })
	var order []int
	Run(5, func(c int) {
		order = append(order, c) // no lock: a chunk on another goroutine would race (go test -race)
		if c == 3 {
			time.Sleep(2 * time.Millisecond)
			Run(3, func(int) { order = append(order, -1) })
		}
	})
	stop()
	if len(passes) != 1 || len(passes[0].Chunks) != 5 {
		t.Fatalf("recorded %d passes %v, want one of 5 chunks", len(passes), passes)
	}
	want := []int{0, 1, 2, 3, -1, -1, -1, 4}
	for i := range want {
		if i >= len(order) || order[i] != want[i] {
			t.Fatalf("chunks ran in order %v, want %v", order, want)
		}
	}
	if d := passes[0].Chunks[3]; d < 2*time.Millisecond {
		t.Errorf("chunk 3 slept 2 ms, recorded %v", d)
	}
	Run(4, func(int) {})
	if len(passes) != 1 {
		t.Errorf("a pass after stop was recorded")
	}
}
