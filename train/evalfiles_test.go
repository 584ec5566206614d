package train

import (
	"context"

	"github.com/vitgo/vit/checkpoint"
	"github.com/vitgo/vit/evaluate"
	"github.com/vitgo/vit/report"
)

// evalToFiles is what cmd/eval does with a checkpoint: evaluate it and
// write the report files (each atomically, none on failure).
func evalToFiles(ctx context.Context, o evaluate.Options, files report.EvalFiles) (evaluate.Result, checkpoint.ModelMeta, []string, error) {
	reps, err := report.NewEvalReports(files)
	if err != nil {
		return evaluate.Result{}, checkpoint.ModelMeta{}, nil, err
	}
	return evaluate.CheckpointReported(ctx, o, reps)
}
