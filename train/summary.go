package train

import (
	"fmt"
	"io"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/internal/memory"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/report"
)

// Summary is -dry-run: it validates cfg, checks its memory estimate against
// the machine, builds the model's forward graph for one image in training
// mode (proving the model assembles; the loss and the backward pass are not
// built) and prints report.Summary. A run that cannot fit is an error (a
// *ConfigError wrapping a *MemoryError) after the estimate is printed.
func Summary(w io.Writer, cfg Config) error {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return err
	}
	est := EstimateMemory(cfg)
	if err := memory.CheckProcess(est); err != nil {
		est.Format(w)
		return err
	}
	m, err := layers.New(cfg.Model, tensor.Float32, cfg.Train.Seed)
	if err != nil {
		return err
	}
	if _, err := m.Build(1, layers.BuildOptions{Training: true, Precision: cfg.Train.Precision, Recompute: cfg.Train.Recompute}); err != nil {
		return fmt.Errorf("build: %w", err)
	}
	if err := report.Summary(w, m, cfg.Train.BatchSize, cfg.EvalBatch(), cfg.Data.Prefetch, est); err != nil {
		return err
	}
	if !cfg.Distill.Type.On() {
		return nil
	}
	tc, _, err := TeacherConfig(cfg.Distill, cfg.Model)
	if err != nil {
		return err
	}
	// The teacher runs one forward pass per training image; the student a
	// forward and a backward pass, about three forwards.
	tf, sf := tc.ForwardFLOPs(), 3*cfg.Model.ForwardFLOPs()
	_, err = fmt.Fprintf(w, "\ndistill %s (alpha %v, tau %v), teacher %s: img %v, patch %d, dim %d, depth %d, %d parameters\n"+
		"teacher forward %.3g GFLOP/image, student step about %.3g GFLOP/image: the teacher adds about %.0f%% to a step's time\n",
		cfg.Distill.Type, cfg.Distill.Alpha.Value(), cfg.Distill.Tau, cfg.Distill.Teacher, tc.ImgSize, tc.PatchSize, tc.EmbedDim, tc.Depth,
		layers.CountParams(tc), tf/1e9, sf/1e9, 100*tf/sf)
	return err
}
