package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadCurves(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "metrics.csv")
	csv := "epoch,step,lr,train_loss,val_loss,val_top1,val_top5\n" +
		"1,10,0.1,2.5,2.0,0.25,0.5\n" +
		"2,20,0.1,1.5,,,\n" // a row without validation
	if err := os.WriteFile(path, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := readCurves(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.trainLoss) != 2 || c.trainLoss[1].X != 20 || c.trainLoss[1].Y != 1.5 {
		t.Errorf("train loss = %v", c.trainLoss)
	}
	if len(c.valTop1) != 1 || c.valTop1[0].X != 10 || c.valTop1[0].Y != 25 {
		t.Errorf("val top-1 = %v, want one point (10, 25 %%)", c.valTop1)
	}
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("epoch,loss\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readCurves(bad); err == nil || !strings.Contains(err.Error(), `"step"`) {
		t.Errorf("want an error naming the missing column, got %v", err)
	}
}
