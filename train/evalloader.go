package train

import (
	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/evaluate"
)

// EvalLoader is the validation loading that cfg says: Run evaluates with it,
// and cmd/eval with a config does too.
func (c Config) EvalLoader() evaluate.Loader {
	return evaluate.Loader{Data: c.Data, Augment: c.Augment, BatchSize: c.EvalBatch(), Seed: c.Train.Seed, Threads: c.Train.Threads}
}

// NewEvalLoader opens cfg's validation split with the loader that Run
// evaluates with (no augmentation, batch train.eval_batch_size),
// normalising with mean and std (nil: the data set's own).
func NewEvalLoader(cfg Config, mean, std []float64) (*data.Loader, error) {
	cfg = cfg.WithDefaults()
	return cfg.EvalLoader().Open(cfg.Model, mean, std)
}
