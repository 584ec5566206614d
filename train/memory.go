package train

import (
	"github.com/vitgo/vit/internal/memory"
	"github.com/vitgo/vit/memest"
)

// MemoryEstimate is the memory a run needs, by part, in bytes, computed from
// the config alone (see memest).
type MemoryEstimate = memory.Estimate

// MemoryError says a run needs more memory than the machine has. It is the
// Err of a *ConfigError whose key is the setting that contributes most.
type MemoryError = memory.Error

// EstimateMemory estimates the memory of training cfg (cfg's zero fields
// mean their defaults).
func EstimateMemory(cfg Config) MemoryEstimate {
	return memest.Of(memorySpec(cfg.WithDefaults(), true))
}

// EstimateEvalMemory estimates the memory of evaluating a model of cfg.Model
// at train.eval_batch_size (or batch_size) on cfg.Data.
func EstimateEvalMemory(cfg Config) MemoryEstimate {
	return memest.Of(memorySpec(cfg.WithDefaults(), false))
}

// memorySpec is the estimate's view of a resolved config. With a teacher
// (distill.type hard or soft) it reads the teacher's architecture from the
// file's metadata or shapes; a teacher it cannot read is left out here and
// refused when the run loads it.
func memorySpec(cfg Config, training bool) memest.Spec {
	s := memest.Spec{Model: cfg.Model, Data: cfg.Data, Batch: cfg.Train.BatchSize, EvalBatch: cfg.EvalBatch(),
		Threads: cfg.Train.Threads, GradAccum: cfg.Train.GradAccumSteps, EMA: cfg.Optim.EMA, Training: training,
		BF16: cfg.Train.Precision.IsBF16(), Recompute: cfg.Train.Recompute, Optimizer: string(cfg.Optim.Opt)}
	if training {
		// A freeze list that does not resolve is refused when the run
		// builds its graph; the estimate then counts every tensor.
		if frozen, err := FrozenNames(cfg); err == nil {
			s.Frozen = frozen
		}
	}
	if training && cfg.Distill.Type.On() {
		if tc, _, err := TeacherConfig(cfg.Distill, cfg.Model); err == nil {
			s.Teacher = &tc
		}
	}
	return s
}

// CheckMemory refuses an estimate above have bytes with a *ConfigError
// naming the key that contributes most, wrapping a *MemoryError; have <= 0
// means unknown: no check.
func CheckMemory(e MemoryEstimate, have int64, source string) error {
	return memory.Check(e, have, source)
}
