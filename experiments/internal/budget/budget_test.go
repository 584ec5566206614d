package budget

import (
	"flag"
	"io"
	"slices"
	"testing"
)

func TestFlagsAndOverrides(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var b Budget
	b.Flags(fs, Budget{LimitTrain: 100, Epochs: 3, Seed: 7}, "the run")
	if err := fs.Parse([]string{"-epochs", "5", "-set", "optim.lr=0.1", "-set", "train.epochs=9"}); err != nil {
		t.Fatal(err)
	}
	want := []string{"data.limit_train=100", "data.limit_val=0", "train.epochs=5", "train.max_steps=0", "train.seed=7",
		"train.out_dir=runs/x", "model.readout=mean", "optim.lr=0.1", "train.epochs=9"}
	if got := b.Overrides("runs/x", "model.readout=mean"); !slices.Equal(got, want) {
		t.Errorf("overrides\n got %q\nwant %q", got, want)
	}
	if err := fs.Parse([]string{"-epochs", "x"}); err == nil {
		t.Error("-epochs x: no error")
	}
}
