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
	if err := memory.CheckMachine(est); err != nil {
		est.Format(w)
		return err
	}
	m, err := layers.New(cfg.Model, tensor.Float32, cfg.Train.Seed)
	if err != nil {
		return err
	}
	if _, err := m.Build(1, layers.BuildOptions{Training: true}); err != nil {
		return fmt.Errorf("build: %w", err)
	}
	return report.Summary(w, m, cfg.Train.BatchSize, cfg.EvalBatch(), cfg.Data.Prefetch, est)
}
