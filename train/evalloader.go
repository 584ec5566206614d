package train

import "github.com/vitgo/vit/data"

// NewEvalLoader opens cfg's validation split with the loader that Run and
// EvaluateCheckpoint evaluate with (no augmentation, batch
// train.eval_batch_size), normalising with mean and std (nil: the data
// set's own).
func NewEvalLoader(cfg Config, mean, std []float64) (*data.Loader, error) {
	ds, err := data.Open(cfg.Data, data.Val, cfg.Model.InChans)
	if err != nil {
		return nil, err
	}
	if len(mean) == 0 {
		mean, std = ds.Norm()
	}
	return data.NewLoader(ds, loaderConfig(cfg, false, mean, std))
}
