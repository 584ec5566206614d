package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vitgo/vit/train"
)

func TestNanStep(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{errors.New("step 17: loss is NaN (non-finite); the last good checkpoint is kept in x"), 17},
		{fmt.Errorf("wrapped: %w", errors.New("step 3: gradient of head.weight is non-finite")), 3},
		{errors.New("non-finite somewhere"), -1},
	} {
		if got := nanStep(c.err); got != c.want {
			t.Errorf("nanStep(%q) = %d, want %d", c.err, got, c.want)
		}
	}
}

func TestCellStats(t *testing.T) {
	c := &cell{Runs: []outcome{{Top1: 0.9}, {NaN: true}, {Top1: 0.7}, {Top1: 0.15}}}
	mean, std, lo, nan := c.stats()
	wantMean := (0.9 + 0.7 + 0.15) / 3
	var ss float64
	for _, x := range []float64{0.9, 0.7, 0.15} {
		ss += (x - wantMean) * (x - wantMean)
	}
	if math.Abs(mean-wantMean) > 1e-12 || math.Abs(std-math.Sqrt(ss/2)) > 1e-12 || lo != 0.15 || nan != 1 {
		t.Errorf("stats = %v, %v, %v, %d", mean, std, lo, nan)
	}
	if got := c.collapsed(); got != 1 {
		t.Errorf("collapsed = %d, want 1", got)
	}
	all := &cell{Runs: []outcome{{NaN: true}}}
	if m, _, _, n := all.stats(); !math.IsNaN(m) || n != 1 {
		t.Errorf("all diverged: mean %v, nan %d", m, n)
	}
	if tab := formatTable([]*cell{all}); !strings.Contains(tab, "| — | — | 1 / 1 |") {
		t.Errorf("table of an all-NaN cell:\n%s", tab)
	}
}

func TestPickVariants(t *testing.T) {
	vs, err := pickVariants("no_clip, default")
	if err != nil || len(vs) != 2 || vs[0].Name != "default" || vs[1].Name != "no_clip" {
		t.Fatalf("pickVariants = %v, %v; want default, no_clip in table order", vs, err)
	}
	if _, err := pickVariants("no_such"); err == nil || !strings.Contains(err.Error(), `"no_such"`) {
		t.Errorf("want an error naming the unknown variant, got %v", err)
	}
	if vs, _ := pickVariants("all"); len(vs) != len(variants) {
		t.Errorf("all = %d variants, want %d", len(vs), len(variants))
	}
}

func TestFinishedReadsBackOnlyCompleteMatchingRuns(t *testing.T) {
	dir := t.TempDir()
	cfg, err := train.LoadConfig("../../configs/mnist_vit_tiny.yaml", []string{"train.epochs=2", "train.out_dir=" + dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := finished(cfg); ok {
		t.Fatal("empty directory read back as finished")
	}
	y, err := cfg.YAML()
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(train.ConfigFile, string(y))
	const header = "epoch,step,lr,train_loss,val_loss,val_top1,val_top5\n"
	write(train.MetricsFile, header+"1,468,0.001,0.5,0.4,0.81,0.99\n")
	if _, ok := finished(cfg); ok {
		t.Error("a run stopped after epoch 1 of 2 read back as finished")
	}
	write(train.MetricsFile, header+"1,468,0.001,0.5,0.4,0.81,0.99\n2,936,0.0001,0.3,0.2,0.93,0.99\n")
	if o, ok := finished(cfg); !ok || o.Top1 != 0.93 || o.Loss != 0.2 {
		t.Errorf("finished run: %+v, %v; want top-1 0.93, loss 0.2", o, ok)
	}
	other := cfg
	other.Optim.LR *= 5
	if _, ok := finished(other); ok {
		t.Error("a run with another config read back as finished")
	}
}
