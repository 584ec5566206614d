package optim

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Optimizer is one update rule over a model's named parameters, as gonum's
// optimize.Method is one interface with several implementations: [AdamW],
// [SGD] and [Lamb]. [New] builds the one a config names (optim.opt).
//
// Its state is optimizer-neutral: the number of steps taken and, per slot
// (AdamW's "m" and "v", SGD's "momentum_buffer", Lamb's "exp_avg" and
// "exp_avg_sq"), one buffer per trainable parameter name. The training-state
// file stores each slot's buffers under "optim.<slot>.<param>".
type Optimizer interface {
	// Step applies one update with learning rate lr to every parameter
	// that is not Frozen, in place on Value, reading Grad. The list must
	// name the same tensors on every call (any order); on error nothing is
	// modified.
	Step(params []Param, lr float64) error
	// Steps returns the number of steps taken.
	Steps() int
	// Groups returns the group (weight decay, learning-rate scale) of
	// each parameter, parallel to params, as Step applies them: timm's
	// parameter groups, the same for every optimizer.
	Groups(params []Param) []Group
	// Slots names the optimizer's per-parameter state buffers, in the
	// order they are stored.
	Slots() []string
	// SaveState returns a copy of the state. Before the first step its
	// slots are empty.
	SaveState() State
	// RestoreState replaces the state with a copy of one saved by
	// SaveState, so the next Step continues the run exactly. A state that
	// holds another optimizer's slots is an error wrapping ErrSlots.
	RestoreState(State) error
}

// State is an [Optimizer]'s state: the steps taken and, per slot name, one
// buffer per trainable parameter name.
type State struct {
	Step  int
	Slots map[string]map[string][]float32 // slot → parameter name → buffer
}

// ErrSlots is wrapped by RestoreState when the state's slots are not the
// optimizer's own: a state saved by another optimizer.
var ErrSlots = errors.New("the optimizer state holds another optimizer's slots")

var (
	_ Optimizer = (*AdamW)(nil)
	_ Optimizer = (*SGD)(nil)
	_ Optimizer = (*Lamb)(nil)
)

// optimizers is the optimizer table, timm's create_optimizer_v2: a name
// (optim.opt) to the constructor of its row. Adding an optimizer is a row
// here and a file of its own. (A function, not a variable: the
// constructors validate names against this table.)
func optimizers() []optRow {
	return []optRow{
		{OptAdamW, 2, func(c Config) (Optimizer, error) { return NewAdamW(c) }},
		{OptSGD, 1, func(c Config) (Optimizer, error) { return NewSGD(c, true) }},
		{OptNesterov, 1, func(c Config) (Optimizer, error) { return NewSGD(c, true) }},
		{OptMomentum, 1, func(c Config) (Optimizer, error) { return NewSGD(c, false) }},
		{OptLamb, 2, func(c Config) (Optimizer, error) { return NewLamb(c) }},
	}
}

// optRow is one row of the optimizer table.
type optRow struct {
	name  OptName
	slots int // float32 values of state per trained parameter (SlotsPerParam)
	new   func(Config) (Optimizer, error)
}

// optNames lists the table's names, the values optim.opt accepts.
func optNames() []OptName {
	out := make([]OptName, 0, 8)
	for _, row := range optimizers() {
		out = append(out, row.name)
	}
	return out
}

// New returns the optimizer c.Opt names ("" = adamw) with c's
// hyper-parameters; zero fields of c mean the defaults
// (Config.WithDefaults). An invalid config is a *cfgerr.Error naming the key.
func New(c Config) (Optimizer, error) {
	c = c.WithDefaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	for _, row := range optimizers() {
		if row.name == c.Opt {
			return row.new(c)
		}
	}
	return nil, fmt.Errorf("optim.opt %q: no such optimizer", c.Opt) // unreachable: Validate checked it
}

// checkLR reports a learning rate that is negative, NaN or infinite.
func checkLR(name string, step int, lr float64) error {
	if !(lr >= 0) || math.IsInf(lr, 0) {
		return fmt.Errorf("%s step %d: learning rate must be finite and >= 0, got %g", name, step, lr)
	}
	return nil
}

// checkParams checks every parameter's lengths and name, and that layer
// decay has the layer ids it needs.
func checkParams(params []Param, layerDecay float64) error {
	for _, p := range params {
		if err := p.check(); err != nil {
			return err
		}
	}
	if layerDecay != 0 && len(params) > 0 && numLayers(params) < 2 {
		return fmt.Errorf("layer decay %g needs the model's layer ids, but every parameter has LayerID 0", layerDecay)
	}
	return nil
}

// groupsOf returns the group of each of params (see [Optimizer]).
func groupsOf(params []Param, wd, layerDecay float64) []Group {
	n := numLayers(params)
	out := make([]Group, len(params))
	for i, p := range params {
		out[i] = groupOf(p, n, wd, layerDecay)
	}
	return out
}

// groupOf returns the group of p in a model of numLayers layer ids, for
// weight decay wd and layer decay layerDecay (0: off).
func groupOf(p Param, numLayers int, wd, layerDecay float64) Group {
	g := Group{WeightDecay: wd, LRScale: LayerScale(p.LayerID, numLayers, layerDecay)}
	if NoWeightDecay(p) {
		g.WeightDecay = 0
	}
	return g
}

// slotBanks is the state of an optimizer with named per-parameter slots:
// one bank per slot, nil until the first step (or a restored step > 0).
type slotBanks struct {
	opt   OptName
	names []string
	banks []*bank
}

// prepare checks the trainable params against the banks, creating zero
// buffers on the first step.
func (s *slotBanks) prepare(params []Param) error {
	if len(s.names) == 0 {
		return nil
	}
	if s.banks != nil {
		return s.banks[0].match(params, string(s.opt)+" state")
	}
	banks := make([]*bank, len(s.names))
	for i := range banks {
		b, err := newBank(params, false)
		if err != nil {
			return err
		}
		banks[i] = b
	}
	s.banks = banks
	return nil
}

// export returns a copy of every slot (empty before the first step).
func (s *slotBanks) export() map[string]map[string][]float32 {
	out := make(map[string]map[string][]float32, len(s.names))
	for i, name := range s.names {
		if s.banks == nil {
			out[name] = map[string][]float32{}
		} else {
			out[name] = s.banks[i].export()
		}
	}
	return out
}

// load replaces the banks with a copy of st's slots after checking them
// (checkState).
func (s *slotBanks) load(st State) error {
	if err := checkState(s.opt, s.names, st); err != nil {
		return err
	}
	if st.Step == 0 || len(s.names) == 0 {
		s.banks = nil
		return nil
	}
	s.banks = make([]*bank, len(s.names))
	for i, name := range s.names {
		s.banks[i] = bankFrom(st.Slots[name])
	}
	return nil
}

// checkState reports a state that optimizer opt, keeping the slots names,
// cannot continue from: a negative step, a slot it does not keep (ErrSlots),
// buffers at step 0 or none after it, or slots naming different parameters.
func checkState(opt OptName, names []string, st State) error {
	if st.Step < 0 {
		return fmt.Errorf("%s state: step must be >= 0, got %d", opt, st.Step)
	}
	n := 0
	for slot, bufs := range st.Slots {
		if !slices.Contains(names, slot) {
			return fmt.Errorf("%s state: slot %q (optim.opt %s keeps %q): %w", opt, slot, opt, names, ErrSlots)
		}
		n += len(bufs)
	}
	switch {
	case st.Step == 0 && n > 0:
		return fmt.Errorf("%s state: step 0 but %d buffers", opt, n)
	case st.Step > 0 && len(names) > 0 && n == 0:
		return fmt.Errorf("%s state: step %d but no %q buffers", opt, st.Step, names)
	case st.Step == 0 || len(names) < 2:
		return nil
	}
	for _, slot := range names[1:] {
		if err := checkSameNames(st.Slots[names[0]], st.Slots[slot], names[0], slot); err != nil {
			return fmt.Errorf("%s state: %w", opt, err)
		}
	}
	return nil
}
