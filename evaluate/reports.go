package evaluate

import (
	"context"

	"github.com/vitgo/vit/checkpoint"
)

// Reports is where a checkpoint's evaluation sends what it finds, as
// cmd/eval's report files (report.EvalReports) take it: each batch as it is
// evaluated (OnBatch, nil for none), then the finished result (Commit), or
// nothing at all when the evaluation fails or is interrupted (Abort, a no-op
// after Commit).
type Reports interface {
	OnBatch() func(idx, labels []int, logits []float32) error
	Commit(r Result, classes []string) error
	Abort()
}

// CheckpointReported is cmd/eval's job: [Checkpoint] with its batches and
// result sent to reps (o.OnBatch is replaced by reps.OnBatch). A failed,
// interrupted or panicking evaluation aborts reps, so report files written
// atomically leave nothing behind.
func CheckpointReported(ctx context.Context, o Options, reps Reports) (Result, checkpoint.ModelMeta, []string, error) {
	defer reps.Abort() // a panic must not leave a temporary file; nothing after Commit
	o.OnBatch = reps.OnBatch()
	r, meta, notes, err := Checkpoint(ctx, o)
	if err != nil {
		return r, meta, notes, err
	}
	return r, meta, notes, reps.Commit(r, meta.Classes)
}
