package parallel

import (
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
