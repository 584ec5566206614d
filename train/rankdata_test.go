package train

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/dist"
	"github.com/vitgo/vit/internal/synthimg"
)

// runEachRank runs cfgs[r] as rank r of an in-process job and returns every
// rank's error. A rank that fails with anything but the errors every rank
// returns alike (*RankDataError, *RankFailedError) aborts the job, so that
// a failing test cannot hang.
func runEachRank(t *testing.T, cfgs []Config) []error {
	t.Helper()
	cs, err := dist.NewLocal(len(cfgs))
	if err != nil {
		t.Fatal(err)
	}
	errs := make([]error, len(cfgs))
	var wg sync.WaitGroup
	for r, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[r] = Run(context.Background(), cfgs[r], Options{Log: quietLog(), Comm: c})
			var de *RankDataError
			var fe *RankFailedError
			if errs[r] != nil && !errors.As(errs[r], &de) && !errors.As(errs[r], &fe) {
				c.Abort(1)
			}
		}()
	}
	wg.Wait()
	return errs
}

// smallFolder writes a folder data set of classes c0, c1, c2 (four 28×28
// training images and one validation image each) and returns its root.
func smallFolder(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if _, err := synthimg.WriteSmallFolder(root, 3, 4, 1, 28); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestRanksAgreeOnData: ranks whose data.root (a per-rank key) holds other
// data than rank 0's (Fashion-MNIST beside MNIST; a folder with a class
// renamed, or renamed so that the classes sort in another order; a
// validation image more) all stop before step 1 with a *RankDataError
// naming data.root, the split and the rank; the same data on another root
// trains.
func TestRanksAgreeOnData(t *testing.T) {
	mnist, err := data.LocateMNIST()
	if err != nil {
		t.Skip(err)
	}
	fashion, ferr := data.LocateFashionMNIST()
	rename := func(from, to string) func(t *testing.T, root string) {
		return func(t *testing.T, root string) {
			for _, s := range []string{"train", "val"} {
				if err := os.Rename(filepath.Join(root, s, from), filepath.Join(root, s, to)); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for _, tc := range []struct {
		name   string
		folder bool
		root1  func(t *testing.T, root string) // edits rank 1's copy of the folder
		idx1   string                          // rank 1's data.root for MNIST
		split  string                          // the split named; "" = the ranks agree
	}{
		{name: "fashion beside mnist", idx1: fashion, split: "train"},
		{name: "same mnist", idx1: mnist},
		{name: "class renamed", folder: true, root1: rename("c2", "d2"), split: "train"},
		{name: "classes reordered", folder: true, root1: rename("c0", "d0"), split: "train"},
		{name: "one more val image", folder: true, split: "val", root1: func(t *testing.T, root string) {
			raw, err := os.ReadFile(filepath.Join(root, "val", "c1", "a000.png"))
			if err == nil {
				err = os.WriteFile(filepath.Join(root, "val", "c1", "a001.png"), raw, 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
		}},
		{name: "same folder elsewhere", folder: true, root1: func(*testing.T, string) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.folder && tc.idx1 == "" {
				t.Skip(ferr)
			}
			cfg := tinyRun(t)
			cfg.Mixup, cfg.Train.MaxSteps, cfg.Train.BatchSize = data.MixupConfig{}, 1, 4
			cfg.Data.Root, cfg.Data.LimitTrain, cfg.Data.LimitVal = mnist, 16, 8
			if tc.folder {
				cfg.Data.Name, cfg.Data.Root, cfg.Model.NumClasses = data.NameFolder, smallFolder(t), 3
			}
			rank1 := cfg
			rank1.Data.Root = tc.idx1
			if tc.folder {
				rank1.Data.Root = smallFolder(t)
				tc.root1(t, rank1.Data.Root)
			}
			errs := runEachRank(t, []Config{cfg, rank1})
			for r, err := range errs {
				var de *RankDataError
				switch {
				case tc.split == "" && err != nil:
					t.Errorf("rank %d: %v, want a run", r, err)
				case tc.split == "":
				case !errors.As(err, &de):
					t.Errorf("rank %d: %v, want a *RankDataError", r, err)
				case de.Key != "data.root" || de.Split != tc.split || !slices.Equal(de.Ranks, []int{1}):
					t.Errorf("rank %d: %v names %s, split %q, ranks %v; want data.root, %q, [1]", r, err, de.Key, de.Split, de.Ranks, tc.split)
				default:
					t.Logf("rank %d: %v", r, err)
				}
			}
		})
	}
}

// TestRanksAgreeOnTeacher: ranks that loaded teacher files of other bytes
// under one distill.teacher (a relative path from other working
// directories) all return a *RankDataError naming distill.teacher and the
// rank; and a rank whose teacher failed to load stops the others with a
// *RankFailedError instead of leaving them waiting.
func TestRanksAgreeOnTeacher(t *testing.T) {
	for _, tc := range []struct {
		name string
		sha  [3]string // each rank's teacher digest
		fail bool      // rank 2's model fails to build
		want []int     // ranks named; nil = agree
	}{
		{name: "same", sha: [3]string{"aa", "aa", "aa"}},
		{name: "rank 2 differs", sha: [3]string{"aa", "aa", "bb"}, want: []int{2}},
		{name: "ranks 1 and 2 differ", sha: [3]string{"aa", "bb", "bb"}, want: []int{1, 2}},
		{name: "rank 2 failed", sha: [3]string{"aa", "aa", "aa"}, fail: true, want: []int{2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs, err := dist.NewLocal(3)
			if err != nil {
				t.Fatal(err)
			}
			errs := make([]error, 3)
			var wg sync.WaitGroup
			for r, c := range cs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					run := &run{comm: c, cfg: Config{Distill: DistillConfig{Type: DistillHard, Teacher: "teacher.safetensors"}}, teacherSHA: tc.sha[r]}
					var built error
					if tc.fail && r == 2 {
						built = errors.New("distill.teacher: no such file")
					}
					errs[r] = run.agreeTeacher(built)
				}()
			}
			wg.Wait()
			for r, err := range errs {
				var de *RankDataError
				var fe *RankFailedError
				switch {
				case tc.want == nil && err != nil:
					t.Errorf("rank %d: %v, want nil", r, err)
				case tc.want == nil:
				case tc.fail && r == 2:
					if err == nil || errors.As(err, &fe) {
						t.Errorf("rank 2: %v, want its own error", err)
					}
				case tc.fail:
					if !errors.As(err, &fe) || !slices.Equal(fe.Ranks, tc.want) {
						t.Errorf("rank %d: %v, want a *RankFailedError naming %v", r, err, tc.want)
					}
				case !errors.As(err, &de) || de.Key != "distill.teacher" || !slices.Equal(de.Ranks, tc.want):
					t.Errorf("rank %d: %v, want a *RankDataError naming distill.teacher and ranks %v", r, err, tc.want)
				default:
					t.Logf("rank %d: %v", r, err)
				}
			}
		})
	}
}
