// Command readout compares the two classifier readouts of the ViT, the class
// token (model.readout=cls) and the mean of the patch tokens
// (model.readout=mean), on MNIST with the same recipe, budget and seed.
//
//	go run ./experiments/readout [-limit-train 20000] [-epochs 8] [-limit-val 5000] [-seed 0] [-set key=value]…
//
// It trains one model per readout into -out (runs/experiments/readout by
// default), prints the final validation table, draws the two runs' curves
// from their metrics.csv into curves.png next to this file, and rewrites
// README.md with the table, the command and its wall time.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/vitgo/vit/experiments/internal/budget"
	"github.com/vitgo/vit/train"
)

// row is one readout's outcome.
type row struct {
	Readout   string
	Top1      float64 // final validation top-1 (fraction)
	Loss      float64 // final validation loss
	BestTop1  float64
	TrainLoss float64 // mean training loss of the last epoch
	Steps     int
	Wall      time.Duration
	Metrics   string // the run's metrics.csv
}

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "readout: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("readout", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "configs/mnist_vit_tiny.yaml", "base recipe (YAML)")
	out := fs.String("out", "runs/experiments/readout", "directory for the runs' checkpoints and metrics")
	dir := fs.String("dir", "experiments/readout", "where README.md and curves.png are written")
	noReadme := fs.Bool("no-readme", false, "print the table but do not rewrite README.md")
	var bud budget.Budget
	bud.Flags(fs, budget.Budget{LimitTrain: 20000, LimitVal: 5000, Epochs: 8}, "each run")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return fmt.Errorf("-dir: %w", err)
	}
	start := time.Now()
	log := logrus.New()
	log.SetOutput(stderr)

	var rows []row
	for _, readout := range []string{"cls", "mean"} {
		outDir := filepath.Join(*out, readout)
		overrides := bud.Overrides(outDir, "model.readout="+readout)
		cfg, err := train.LoadConfig(*cfgPath, overrides)
		if err != nil {
			return err
		}
		log.Infof("readout=%s: training into %s", readout, outDir)
		t0 := time.Now()
		res, err := train.Run(context.Background(), cfg, train.Options{Log: log})
		if err != nil {
			return fmt.Errorf("readout=%s: %w", readout, err)
		}
		r := row{Readout: readout, Top1: res.Last.Top1, Loss: res.Last.Loss, BestTop1: res.BestTop1,
			Steps: res.Steps, Wall: time.Since(t0), Metrics: filepath.Join(outDir, train.MetricsFile)}
		c, err := readCurves(r.Metrics)
		if err != nil {
			return err
		}
		if n := len(c.trainLoss); n > 0 {
			r.TrainLoss = c.trainLoss[n-1].Y
		}
		rows = append(rows, r)
	}

	table := formatTable(rows)
	fmt.Fprint(stdout, table)
	png := filepath.Join(*dir, "curves.png")
	if err := plotCurves(rows, png); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s\n", png)
	if *noReadme {
		return nil
	}
	cmd := "go run ./experiments/readout"
	if len(args) > 0 {
		cmd += " " + strings.Join(args, " ")
	}
	readme := filepath.Join(*dir, "README.md")
	if err := writeReadme(readme, cmd, time.Since(start), table, rows, bud.LimitVal); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s\n", readme)
	return nil
}

// formatTable renders the rows as a markdown table.
func formatTable(rows []row) string {
	var b strings.Builder
	b.WriteString("| readout | val top-1 | val loss | best val top-1 | train loss (last epoch) | steps | wall |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %.2f %% | %.4f | %.2f %% | %.4f | %d | %s |\n",
			r.Readout, 100*r.Top1, r.Loss, 100*r.BestTop1, r.TrainLoss, r.Steps, r.Wall.Round(time.Second))
	}
	return b.String()
}
