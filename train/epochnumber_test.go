package train

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"testing"

	"github.com/vitgo/vit/report"
)

// readCSV returns the rows of a CSV file as maps from its header.
func readCSV(t *testing.T, path string) []map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, h := range recs[0] {
			m[h] = r[i]
		}
		rows = append(rows, m)
	}
	return rows
}

// TestOneEpochNumbering: metrics.csv numbers epochs as steps.csv does
// (1-based, the epoch of the row's last step), also at a max_steps stop
// inside an epoch (it wrote 0 inside epoch 1, and 1 inside epoch 2).
func TestOneEpochNumbering(t *testing.T) {
	for _, maxSteps := range []int{1, 3} { // 2 steps per epoch: inside epoch 1, inside epoch 2
		cfg := quickRun(t)
		cfg.Train.Epochs, cfg.Train.MaxSteps, cfg.Train.LogEvery = 3, maxSteps, 1
		if _, err := Run(context.Background(), cfg, Options{Log: quietLog()}); err != nil {
			t.Fatal(err)
		}
		stepsEpoch := map[string]string{}
		for _, r := range readCSV(t, filepath.Join(cfg.Train.OutDir, report.StepsFile)) {
			stepsEpoch[r["step"]] = r["epoch"]
		}
		rows := readCSV(t, filepath.Join(cfg.Train.OutDir, MetricsFile))
		for _, r := range rows {
			if want := stepsEpoch[r["step"]]; r["epoch"] != want || want == "" {
				t.Errorf("max_steps %d: metrics.csv puts step %s in epoch %s, steps.csv in %q", maxSteps, r["step"], r["epoch"], want)
			}
		}
		if len(rows) != (maxSteps+1)/2 {
			t.Errorf("max_steps %d: %d metrics rows", maxSteps, len(rows))
		}
	}
}
