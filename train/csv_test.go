package train

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vitgo/vit/checkpoint"
	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/internal/synthimg"
)

// smallCSV writes smallFolder's images (classes c0, c1, c2; four 28×28
// training images and one validation image each) with their CSV files and
// returns the folder and the files.
func smallCSV(t *testing.T) (root, train, val string) {
	t.Helper()
	root = t.TempDir()
	train, val, err := synthimg.WriteSmallCSV(root, 3, 4, 1, 28)
	if err != nil {
		t.Fatal(err)
	}
	return root, train, val
}

// TestTrainOnCSV: a run on CSV files listing a folder's images in the
// folder's order trains the same weights as the run on the folder, and
// writes data.name csv into its model file.
func TestTrainOnCSV(t *testing.T) {
	root, train, val := smallCSV(t)
	cfg := tinyRun(t)
	cfg.Mixup, cfg.Train.MaxSteps, cfg.Train.BatchSize, cfg.Train.EvalBatchSize = data.MixupConfig{}, 3, 4, 4
	cfg.Model.NumClasses = 3
	cfg.Data.Name, cfg.Data.TrainCSV, cfg.Data.ValCSV = data.NameCSV, train, val
	folder := cfg
	folder.Data.Name, folder.Data.Root, folder.Data.TrainCSV, folder.Data.ValCSV = data.NameFolder, root, "", ""
	folder.Train.OutDir = t.TempDir()
	for _, c := range []Config{cfg, folder} {
		res, err := Run(context.Background(), c, Options{Log: quietLog()})
		if err != nil {
			t.Fatalf("%s: %v", c.Data.Name, err)
		}
		if res.Steps != 3 {
			t.Errorf("%s: %d steps, want 3", c.Data.Name, res.Steps)
		}
	}
	if d, at := maxRelDiff(t, finalWeights(t, cfg.Train.OutDir), finalWeights(t, folder.Train.OutDir)); d != 0 {
		t.Errorf("csv and folder runs differ: %g at %s", d, at)
	}
	_, meta, _, err := checkpoint.ReadModel(filepath.Join(cfg.Train.OutDir, LastModel))
	if err != nil {
		t.Fatal(err)
	}
	if meta.Dataset != "csv" || !slices.Equal(meta.Classes, []string{"c0", "c1", "c2"}) {
		t.Errorf("model file says data set %q, classes %v", meta.Dataset, meta.Classes)
	}
}

// TestRanksAgreeOnCSV: data.train_csv and data.val_csv are per-rank keys
// (each rank may keep its files elsewhere), and ranks whose files list
// other data than rank 0's stop before step 1 with a *RankDataError
// naming the key of the split that differs.
func TestRanksAgreeOnCSV(t *testing.T) {
	edit := func(which int, from, to string) func(t *testing.T, files [2]string) {
		return func(t *testing.T, files [2]string) {
			b, err := os.ReadFile(files[which])
			if err == nil {
				err = os.WriteFile(files[which], []byte(strings.Replace(string(b), from, to, 1)), 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		name  string
		edit  func(t *testing.T, files [2]string)
		key   string // "" = the ranks agree
		split string
	}{
		{name: "same files elsewhere", edit: func(*testing.T, [2]string) {}},
		{name: "a training label", edit: edit(0, "a001.png,c1", "a001.png,c2"), key: "data.train_csv", split: "train"},
		{name: "a validation row", edit: edit(1, "val/c2/a000.png,c2\n", ""), key: "data.val_csv", split: "val"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, train, val := smallCSV(t)
			cfg := tinyRun(t)
			cfg.Mixup, cfg.Train.MaxSteps, cfg.Train.BatchSize = data.MixupConfig{}, 1, 4
			cfg.Model.NumClasses = 3
			cfg.Data.Name, cfg.Data.TrainCSV, cfg.Data.ValCSV = data.NameCSV, train, val
			rank1 := cfg
			_, rank1.Data.TrainCSV, rank1.Data.ValCSV = smallCSV(t)
			tc.edit(t, [2]string{rank1.Data.TrainCSV, rank1.Data.ValCSV})
			for r, err := range runEachRank(t, []Config{cfg, rank1}) {
				var de *RankDataError
				switch {
				case tc.key == "" && err != nil:
					t.Errorf("rank %d: %v, want a run", r, err)
				case tc.key == "":
				case !errors.As(err, &de):
					t.Errorf("rank %d: %v, want a *RankDataError", r, err)
				case de.Key != tc.key || de.Split != tc.split || !slices.Equal(de.Ranks, []int{1}):
					t.Errorf("rank %d: %v names %s, split %q, ranks %v; want %s, %q, [1]", r, err, de.Key, de.Split, de.Ranks, tc.key, tc.split)
				}
			}
		})
	}
}

// TestCSVConfigKeys: data.train_csv and data.val_csv are read from YAML and
// -set, written into config.yaml when set (so a resumed run reads them
// back), and required with data.name csv.
func TestCSVConfigKeys(t *testing.T) {
	src := []byte("data:\n  name: csv\n  train_csv: lists/train.csv\n")
	cfg, err := ParseConfig(src, []string{"data.val_csv=lists/val.csv"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Data.TrainCSV != "lists/train.csv" || cfg.Data.ValCSV != "lists/val.csv" {
		t.Fatalf("read %q, %q", cfg.Data.TrainCSV, cfg.Data.ValCSV)
	}
	y, err := cfg.YAML()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseConfig(y, nil)
	if err != nil {
		t.Fatalf("config.yaml does not read back: %v", err)
	}
	if back.Data.TrainCSV != cfg.Data.TrainCSV || back.Data.ValCSV != cfg.Data.ValCSV {
		t.Errorf("config.yaml reads back %q, %q", back.Data.TrainCSV, back.Data.ValCSV)
	}
	_, err = ParseConfig([]byte("data:\n  name: csv\n  train_csv: t.csv\n"), nil)
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Key != "data.val_csv" {
		t.Errorf("csv without data.val_csv: %v, want a *ConfigError naming it", err)
	}
}
