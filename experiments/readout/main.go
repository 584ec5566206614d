// Command readout compares the two classifier readouts of the ViT, the class
// token (model.readout=cls) and the mean of the patch tokens
// (model.readout=mean), on MNIST with the same recipe, budget and seed.
//
//	go run ./experiments/readout [-limit-train 20000] [-epochs 8] [-limit-val 5000] [-seed 0] [-set key=value]…
package main

import (
	_ "embed"
	"path/filepath"

	"github.com/vitgo/vit/experiments/internal/harness"
)

//go:embed readme.md.tmpl
var readme string

var experiment = harness.Experiment[results]{
	Name:    "readout",
	Readme:  readme,
	Budget:  &harness.Budget{LimitTrain: 20000, LimitVal: 5000, Epochs: 8},
	Measure: measure,
	Plot:    func(r results, dir string) error { return plotCurves(r.Rows, filepath.Join(dir, "curves.png")) },
}

func main() { harness.Main(experiment) }

// results are both runs.
type results struct {
	LimitVal int
	Rows     []row
}

// row is one readout's run.
type row struct {
	Readout   string
	Run       harness.Run
	TrainLoss float64 // mean training loss of the last epoch
}

func measure(e *harness.Env) (results, error) {
	res := results{LimitVal: e.Budget.LimitVal}
	for _, readout := range []string{"cls", "mean"} {
		dir := filepath.Join(e.Runs, readout)
		r, err := e.Train("configs/mnist_vit_tiny.yaml", e.Budget.Overrides(dir, "model.readout="+readout)...)
		if err != nil {
			return res, err
		}
		rw := row{Readout: readout, Run: r}
		if n := len(r.Epochs); n > 0 {
			rw.TrainLoss = r.Epochs[n-1].TrainLoss
		}
		res.Rows = append(res.Rows, rw)
	}
	return res, nil
}

// Diff is mean − cls in points of validation top-1.
func (r results) Diff() float64 { return 100 * (r.Rows[1].Run.Top1 - r.Rows[0].Run.Top1) }
