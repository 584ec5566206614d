package train

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/vitgo/vit/dist"
)

// runRanksWith runs one in-process rank per config and returns every rank's
// error; it fails the test when the ranks have not all returned within
// limit (a hang, not a slow run: the refusals below come before training).
func runRanksWith(t *testing.T, cfgs []Config, resume bool, limit time.Duration) []error {
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
			_, errs[r] = Run(context.Background(), cfgs[r], Options{Log: quietLog(), Resume: resume, Comm: c})
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(limit):
		for _, c := range cs {
			c.Abort(9) // release the ranks still waiting, then report
		}
		<-done
		t.Fatalf("the ranks did not all return within %v: %v", limit, errs)
	}
	return errs
}

// TestRanksRefuseDifferentConfigs: a rank started with a key of its own
// (the learning rate, the seed, the depth) stops every rank with one
// *RankConfigError naming that rank and the first differing key, before any
// collective of training; per-process keys may differ.
func TestRanksRefuseDifferentConfigs(t *testing.T) {
	for _, tc := range []struct {
		key  string
		edit func(*Config)
	}{
		{"optim.lr", func(c *Config) { c.Optim.LR = 0.5 }},
		{"train.seed", func(c *Config) { c.Train.Seed++ }},
		{"model.depth", func(c *Config) { c.Model.Depth++ }},
		{"mixup.label_smoothing", func(c *Config) { c.Mixup.LabelSmoothing = 0.3 }},
		{"train.batch_size", func(c *Config) { c.Train.BatchSize = 16 }},
		{"augment.hflip", func(c *Config) { c.Augment.HFlip = 0.5 }},
		{"data.limit_train", func(c *Config) { c.Data.LimitTrain = 32 }},
		{"train.max_steps", func(c *Config) { c.Train.MaxSteps = 7 }},
	} {
		t.Run(tc.key, func(t *testing.T) {
			base := quickRun(t)
			other := base
			tc.edit(&other)
			errs := runRanksWith(t, []Config{base, base, other, other}, false, 2*time.Minute)
			for r, err := range errs {
				var rc *RankConfigError
				if !errors.As(err, &rc) || rc.Rank != 2 || rc.Key != tc.key {
					t.Fatalf("rank %d: %v, want a *RankConfigError naming rank 2 and %s", r, err, tc.key)
				}
			}
		})
	}
	t.Run("per-process keys", func(t *testing.T) {
		a := quickRun(t)
		a.Train.MaxSteps = 1
		b := a
		b.Train.Threads, b.Data.Workers = 1, 1
		for r, err := range runRanksWith(t, []Config{a, b}, false, 5*time.Minute) {
			if err != nil {
				t.Fatalf("rank %d: %v", r, err)
			}
		}
	})
}

// TestResumeOfFinishedRunEndsEveryRank: -resume of a complete run returns
// ErrRunComplete on every rank at once; rank 0 learns it while checking
// out_dir, before the other ranks load data or build a model.
func TestResumeOfFinishedRunEndsEveryRank(t *testing.T) {
	cfg := quickRun(t)
	cfg.Train.MaxSteps = 1
	if _, err := Run(context.Background(), cfg, Options{Log: quietLog()}); err != nil {
		t.Fatal(err)
	}
	for r, err := range runRanksWith(t, []Config{cfg, cfg}, true, 2*time.Minute) {
		if !errors.Is(err, ErrRunComplete) {
			t.Fatalf("rank %d: %v, want ErrRunComplete", r, err)
		}
	}
}
