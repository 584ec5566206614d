package harness

import (
	"flag"
	"fmt"

	"github.com/vitgo/vit/internal/cliflag"
)

// Sets is a repeatable key=value flag: config overrides applied last.
type Sets = cliflag.Strings

// Budget is the size of an experiment's training runs, as flags and as
// config overrides.
type Budget struct {
	LimitTrain int    // data.limit_train; 0 = the whole training set
	LimitVal   int    // data.limit_val; 0 = the whole validation set
	Epochs     int    // train.epochs
	MaxSteps   int    // train.max_steps; 0 = off
	Seed       uint64 // train.seed
	Sets       Sets   // -set key=value, applied after everything else
}

// Flags registers -limit-train, -limit-val, -epochs, -max-steps, -seed and
// -set on fs with def's values as defaults.
func (b *Budget) Flags(fs *flag.FlagSet, def Budget) {
	fs.IntVar(&b.LimitTrain, "limit-train", def.LimitTrain, "training images per run (data.limit_train; 0 = all)")
	fs.IntVar(&b.LimitVal, "limit-val", def.LimitVal, "validation images (data.limit_val; 0 = all)")
	fs.IntVar(&b.Epochs, "epochs", def.Epochs, "epochs per run (train.epochs)")
	fs.IntVar(&b.MaxSteps, "max-steps", def.MaxSteps, "stop each run after this many steps (train.max_steps; 0 = off)")
	fs.Uint64Var(&b.Seed, "seed", def.Seed, "seed (train.seed)")
	fs.Var(&b.Sets, "set", "extra config override for every run, key=value (repeatable)")
}

// Overrides returns the config overrides of a run into outDir: the budget,
// then extra, then the -set ones (so that those win).
func (b Budget) Overrides(outDir string, extra ...string) []string {
	o := []string{
		fmt.Sprintf("data.limit_train=%d", b.LimitTrain),
		fmt.Sprintf("data.limit_val=%d", b.LimitVal),
		fmt.Sprintf("train.epochs=%d", b.Epochs),
		fmt.Sprintf("train.max_steps=%d", b.MaxSteps),
		fmt.Sprintf("train.seed=%d", b.Seed),
		"train.out_dir=" + outDir,
	}
	o = append(o, extra...)
	return append(o, b.Sets...)
}
