package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vitgo/vit/evaluate"
)

// TestEvalReports: the predictions stream into a file that appears, with
// the results JSON and the confusion PNG, only on Commit; after Abort the
// directory is as it was.
func TestEvalReports(t *testing.T) {
	nan := float32(0)
	nan /= nan
	batch := func(r *EvalReports) {
		t.Helper()
		// two images, three classes; the second row's logits are not finite
		if err := r.OnBatch()([]int{7, 8}, []int{2, 0}, []float32{0.1, 0.2, 0.9, nan, 1, 2}); err != nil {
			t.Fatal(err)
		}
	}
	res := evaluate.Result{Top1: 0.5, Images: 2, NonFinite: 1, Loss: float64(nan), PerClass: []float64{0, 0, 1}, Confusion: [][]int{{0, 0, 0}, {0, 0, 0}, {0, 0, 1}}}
	for _, commit := range []bool{false, true} {
		dir := t.TempDir()
		files := EvalFiles{Predictions: filepath.Join(dir, "p.csv"), Results: filepath.Join(dir, "r.json"), Confusion: filepath.Join(dir, "c.png")}
		r, err := NewEvalReports(files)
		if err != nil {
			t.Fatal(err)
		}
		batch(r)
		if !commit {
			r.Abort()
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Fatalf("after Abort: %d files left (%s…)", len(ents), ents[0].Name())
			}
			continue
		}
		if err := r.Commit(res, []string{"a", "b", "c"}); err != nil {
			t.Fatal(err)
		}
		pred, err := os.ReadFile(files.Predictions)
		if err != nil {
			t.Fatal(err)
		}
		want := "index,label,pred,logit_0,logit_1,logit_2\n7,2,2,0.1,0.2,0.9\n8,0,-1,NaN,1,2\n"
		if string(pred) != want {
			t.Errorf("predictions:\n%s\nwant\n%s", pred, want)
		}
		b, err := os.ReadFile(files.Results)
		if err != nil {
			t.Fatal(err)
		}
		var js map[string]any
		if err := json.Unmarshal(b, &js); err != nil || js["loss"] != nil || js["non_finite"] != 1.0 {
			t.Errorf("results %s (%v): want a null loss and non_finite 1", b, err)
		}
		if fi, err := os.Stat(files.Confusion); err != nil || fi.Size() == 0 {
			t.Errorf("confusion PNG: %v", err)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 3 {
			t.Errorf("%d files, want the 3 reports", len(ents))
		}
	}
	var out strings.Builder
	FormatEval(&out, res, []string{"a", "b", "c"})
	if !strings.Contains(out.String(), "1 of 2 images had non-finite logits") {
		t.Errorf("console report lacks the warning:\n%s", out.String())
	}
}
