package train

import (
	"fmt"
	"math"

	"github.com/vitgo/vit/layers"
)

// TeacherLogitsError is returned by a [Step] whose teacher gives a NaN or
// an infinite logit for its batch (NaN weights, or a normalization in its
// metadata that blows the inputs up): hard distillation's argmax of NaN
// labels every image class 0, and soft distillation's softmax is NaN. It
// ends the step before the update, so the weights stay those of the step
// before; on the first batch the run ends before step 1.
type TeacherLogitsError struct {
	Step  int    // the step (0-based)
	Path  string // distill.teacher
	Ranks []int  // on several ranks, those whose rows gave non-finite logits; nil on one
	Value float32
}

func (e *TeacherLogitsError) Error() string {
	where := ""
	if e.Ranks != nil {
		where = fmt.Sprintf(" on the rows of rank(s) %v", e.Ranks)
	} else {
		where = fmt.Sprintf(" (%v)", e.Value)
	}
	return fmt.Sprintf("step %d: distill.teacher %s gives non-finite logits%s: a teacher must be finite on every batch", e.Step, e.Path, where)
}

// checkTeacher checks the teacher's logits of one micro-batch. On one rank
// a non-finite logit is a *TeacherLogitsError at once; on several the rank
// notes it, and [Step.agreeTeacher] ends the step on every rank alike
// before the gradients are reduced.
func (s *Step) checkTeacher(logits []float32, step int) error {
	for _, v := range logits {
		if finite(v) {
			continue
		}
		if s.comm.Size() == 1 {
			return &TeacherLogitsError{Step: step, Path: s.teacher.Path, Value: v}
		}
		s.teacherBad = true
		return nil
	}
	return nil
}

// agreeTeacher shares whether any rank's teacher gave non-finite logits
// in the last Backward (checkTeacher): a *TeacherLogitsError naming those
// ranks on every rank, or nil. One rank, or no teacher: nil at no cost.
func (s *Step) agreeTeacher(step int) error {
	if s.teacher == nil || s.comm.Size() == 1 {
		return nil
	}
	bad := make([]int64, s.comm.Size())
	if s.teacherBad {
		bad[s.comm.Rank()] = 1
	}
	s.teacherBad = false
	if err := s.comm.AllreduceInt64(bad); err != nil {
		return fmt.Errorf("step %d: share the teacher's check: %w", step, err)
	}
	var ranks []int
	for r, b := range bad {
		if b != 0 {
			ranks = append(ranks, r)
		}
	}
	if ranks == nil {
		return nil
	}
	return &TeacherLogitsError{Step: step, Path: s.teacher.Path, Ranks: ranks, Value: float32(math.NaN())}
}

// NonFiniteWeightError is a model file (finetune.init_from, distill.teacher)
// holding a NaN or an infinite weight: training from it, or distilling from
// it, could only give NaN. It names the file and the tensor.
type NonFiniteWeightError struct {
	Key    string // the config key naming the file
	Path   string
	Tensor string
}

func (e *NonFiniteWeightError) Error() string {
	return fmt.Sprintf("%s %s: tensor %s holds a NaN or infinite value", e.Key, e.Path, e.Tensor)
}

// checkWeightsFinite returns a *NonFiniteWeightError naming the first of
// m's parameters (as loaded from path, the file of key) that is not finite.
func checkWeightsFinite(key, path string, m *layers.VisionTransformer) error {
	for _, p := range m.Params {
		if v, ok := p.Value.Data().([]float32); ok && !allFinite(v) {
			return &NonFiniteWeightError{Key: key, Path: path, Tensor: p.Name}
		}
	}
	return nil
}
