package train

import "fmt"

// evalInterrupted ends a run whose end-of-epoch evaluation was interrupted:
// it saves the counters as they were before the epoch's end was recorded
// (trained, not evaluated), so that -resume evaluates the epoch and writes
// its metrics row once, and returns the interrupted run's error.
func (r *run) evalInterrupted(err error, before State) error {
	st := &r.st
	st.Epoch, st.EpochStep, st.LossSum, st.NormSum = before.Epoch, before.EpochStep, before.LossSum, before.NormSum
	if serr := r.save(); serr != nil {
		return serr
	}
	return fmt.Errorf("%w at step %d (%w): checkpoint written to %s", ErrInterrupted, st.Step, err, r.out)
}
