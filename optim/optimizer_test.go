package optim

import (
	"errors"
	"reflect"
	"testing"

	"github.com/vitgo/vit/internal/optional"
)

// TestNewTable checks that each optim.opt name builds its row of the table,
// with its slots.
func TestNewTable(t *testing.T) {
	tests := []struct {
		opt      OptName
		momentum optional.Float
		want     string
		nesterov bool
		slots    []string
	}{
		{"", optional.Float{}, "*optim.AdamW", false, []string{"m", "v"}},
		{OptAdamW, optional.Float{}, "*optim.AdamW", false, []string{"m", "v"}},
		{OptSGD, optional.Float{}, "*optim.SGD", true, []string{"momentum_buffer"}},
		{OptNesterov, optional.Float{}, "*optim.SGD", true, []string{"momentum_buffer"}},
		{OptMomentum, optional.Float{}, "*optim.SGD", false, []string{"momentum_buffer"}},
		{OptMomentum, optional.FloatOf(0), "*optim.SGD", false, nil},
		{OptLamb, optional.Float{}, "*optim.Lamb", false, []string{"exp_avg", "exp_avg_sq"}},
	}
	for _, tc := range tests {
		o, err := New(Config{Opt: tc.opt, Momentum: tc.momentum})
		if err != nil {
			t.Fatalf("%q: %v", tc.opt, err)
		}
		if got := reflect.TypeOf(o).String(); got != tc.want {
			t.Errorf("%q: %s, want %s", tc.opt, got, tc.want)
		}
		if s, ok := o.(*SGD); ok && (s.nesterov != tc.nesterov || (tc.momentum.IsZero() && s.momentum != DefaultMomentum)) {
			t.Errorf("%q: nesterov %v momentum %g", tc.opt, s.nesterov, s.momentum)
		}
		if got := o.Slots(); !reflect.DeepEqual(got, tc.slots) && len(got)+len(tc.slots) > 0 {
			t.Errorf("%q: slots %q, want %q", tc.opt, got, tc.slots)
		}
	}
	if l, _ := New(Config{Opt: OptLamb}); l.(*Lamb).eps != LambEps {
		t.Errorf("lamb eps %g, want %g", l.(*Lamb).eps, LambEps)
	}
	if _, err := New(Config{Opt: "adam"}); err == nil {
		t.Error(`New(opt "adam") succeeded`)
	}
}

// TestRestoreOtherOptimizer checks that a state saved by one optimizer is
// refused by another with ErrSlots, and that the frozen parameter keeps no
// state and does not move.
func TestRestoreOtherOptimizer(t *testing.T) {
	params := func() []Param {
		return []Param{
			{Name: "w", Shape: []int{2, 2}, Value: []float32{1, 2, 3, 4}, Grad: []float32{0.1, -0.2, 0.3, -0.4}},
			{Name: "frozen", Shape: []int{2}, Value: []float32{5, 6}, Frozen: true},
		}
	}
	states := map[OptName]State{}
	for _, name := range optNames() {
		o, err := New(Config{Opt: name})
		if err != nil {
			t.Fatal(err)
		}
		ps := params()
		for range 2 {
			if err := o.Step(ps, 0.1); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		if ps[1].Value[0] != 5 || ps[1].Value[1] != 6 {
			t.Errorf("%s moved the frozen parameter: %v", name, ps[1].Value)
		}
		st := o.SaveState()
		for slot, bufs := range st.Slots {
			if _, ok := bufs["frozen"]; ok || len(bufs) != 1 {
				t.Errorf("%s slot %s: %d buffers (frozen: %v)", name, slot, len(bufs), ok)
			}
		}
		states[name] = st
	}
	for _, a := range []OptName{OptAdamW, OptSGD, OptLamb} {
		for _, b := range []OptName{OptAdamW, OptSGD, OptLamb} {
			o, _ := New(Config{Opt: b})
			err := o.RestoreState(states[a])
			if (a == b) != (err == nil) || (a != b && !errors.Is(err, ErrSlots)) {
				t.Errorf("%s state into %s: %v", a, b, err)
			}
		}
	}
}
