package train

import (
	"errors"
	"fmt"
	"math"

	"github.com/sirupsen/logrus"

	"github.com/vitgo/vit/dist"
)

// shareState makes every rank's weights, optimizer state, EMA and
// counters those of rank 0, which initialised the model or resumed the run:
// the ranks start identical and, taking identical updates, stay so.
func shareState(c dist.Comm, s *Step, st *State) error {
	if c.Size() == 1 {
		return nil
	}
	var mine State // rank 0: the values to send; the others: buffers of the right sizes
	if err := s.SaveTo(&mine, st.Step); err != nil {
		return err
	}
	hdr := []int64{int64(st.Step), int64(st.Epoch), int64(st.EpochStep), int64(mine.OptStep),
		int64(math.Float64bits(st.BestTop1)), int64(math.Float64bits(st.LossSum)), int64(math.Float64bits(st.NormSum))}
	if err := c.BcastInt64(hdr, 0); err != nil {
		return fmt.Errorf("share rank 0's state: %w", err)
	}
	root := c.Rank() == 0
	if !root {
		st.Step, st.Epoch, st.EpochStep, mine.OptStep = int(hdr[0]), int(hdr[1]), int(hdr[2]), int(hdr[3])
		st.BestTop1, st.LossSum, st.NormSum = math.Float64frombits(uint64(hdr[4])), math.Float64frombits(uint64(hdr[5])), math.Float64frombits(uint64(hdr[6]))
		mine.Slots = map[string]map[string][]float32{} // the optimizer's slots (optim.opt is every rank's)
		for _, slot := range s.opt.Slots() {
			mine.Slots[slot] = map[string][]float32{}
			for _, p := range s.params {
				if mine.OptStep > 0 && !p.Frozen {
					mine.Slots[slot][p.Name] = make([]float32, len(p.Value))
				}
			}
		}
	}
	for _, p := range s.params { // one order on every rank
		bufs := [][]float32{mine.Weights[p.Name]}
		if mine.OptStep > 0 && !p.Frozen {
			for _, slot := range s.opt.Slots() {
				bufs = append(bufs, mine.Slots[slot][p.Name])
			}
		}
		if mine.EMA != nil {
			bufs = append(bufs, mine.EMA[p.Name])
		}
		for _, b := range bufs {
			if len(b) != len(p.Value) {
				return fmt.Errorf("share rank 0's state: %s has %d values, want %d", p.Name, len(b), len(p.Value))
			}
			if err := c.BcastFloat32(b, 0); err != nil {
				return fmt.Errorf("share rank 0's state: %w", err)
			}
		}
	}
	if root {
		return nil
	}
	return s.Restore(mine)
}

// ErrStart is returned on the other ranks when rank 0 could not resume or
// start the run; rank 0 returns (and reports) its own error.
var ErrStart = errors.New("rank 0 could not start the run")

// shareOutcome tells every rank how rank 0's start went (err on rank 0):
// nil to go on, ErrRunComplete for a resumed run with nothing left to do,
// or an error, so that no rank waits for a rank 0 that has stopped.
func shareOutcome(c dist.Comm, err error) error {
	if c.Size() == 1 {
		return err
	}
	code := []int64{0}
	switch {
	case errors.Is(err, ErrRunComplete):
		code[0] = 1
	case err != nil:
		code[0] = 2
	}
	if berr := c.BcastInt64(code, 0); berr != nil {
		return errors.Join(err, berr)
	}
	switch {
	case c.Rank() == 0:
		return err
	case code[0] == 1:
		return ErrRunComplete
	case code[0] == 2:
		return ErrStart
	}
	return nil
}

// stopAll shares a stop request: true on every rank when any rank's is.
func stopAll(c dist.Comm, stop bool) (bool, error) {
	v := int64(0)
	if stop {
		v = 1
	}
	m, err := dist.AllreduceMax(c, v)
	return m > 0, err
}

// rankLog is the logger of a rank other than 0: warnings and errors only,
// each marked with the rank.
func rankLog(l *logrus.Logger, c dist.Comm) *logrus.Logger {
	q := logrus.New()
	q.SetOutput(l.Out)
	q.SetFormatter(l.Formatter)
	q.SetLevel(min(l.GetLevel(), logrus.WarnLevel))
	q.AddHook(rankHook(fmt.Sprintf("%d/%d", c.Rank(), c.Size())))
	return q
}

// rankHook adds the field rank to every entry.
type rankHook string

func (h rankHook) Levels() []logrus.Level { return logrus.AllLevels }
func (h rankHook) Fire(e *logrus.Entry) error {
	e.Data["rank"] = string(h)
	return nil
}
