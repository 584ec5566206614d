package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/vitgo/vit/dist"
)

// runRanks runs cfg as a job of n in-process ranks (n = 0: one process with
// no communicator) and returns rank 0's result and every rank's error. A
// rank that fails aborts the job, as cmd/train does under MPI.
func runRanks(t *testing.T, ctx context.Context, cfg Config, n int, resume bool) (*Result, []error) {
	t.Helper()
	if n == 0 {
		res, err := Run(ctx, cfg, Options{Log: quietLog(), Resume: resume})
		return res, []error{err}
	}
	cs, err := dist.NewLocal(n)
	if err != nil {
		t.Fatal(err)
	}
	errs := make([]error, n)
	var res *Result
	var wg sync.WaitGroup
	for r, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := Run(ctx, cfg, Options{Log: quietLog(), Resume: resume, Comm: c})
			errs[r] = err
			if r == 0 {
				res = out
			}
			if err != nil && !errors.Is(err, ErrInterrupted) {
				c.Abort(1)
			}
		}()
	}
	wg.Wait()
	return res, errs
}

func noErrors(t *testing.T, what string, errs []error) {
	t.Helper()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("%s: rank %d: %v", what, r, err)
		}
	}
}

// maxRelDiff is the largest, over tensors, of max|a−b| / max|a|.
func maxRelDiff(t *testing.T, a, b map[string][]float32) (float64, string) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%d vs %d tensors", len(a), len(b))
	}
	worst, at := 0.0, ""
	for name, va := range a {
		vb := b[name]
		if len(vb) != len(va) {
			t.Fatalf("%s: %d vs %d values", name, len(va), len(vb))
		}
		var d, m float64
		for i := range va {
			d = math.Max(d, math.Abs(float64(va[i])-float64(vb[i])))
			m = math.Max(m, math.Abs(float64(va[i])))
		}
		if m > 0 && d/m > worst {
			worst, at = d/m, name
		}
	}
	return worst, at
}

// defaultStochastic is the default MNIST config with Mixup, CutMix, drop
// path and dropout all on, max_steps steps, evaluated on 500 images.
func defaultStochastic(t *testing.T, steps int) Config {
	t.Helper()
	cfg, err := LoadConfig("../configs/mnist_vit_tiny.yaml", []string{
		"mixup.mixup_alpha=0.8", "mixup.cutmix_alpha=1.0", "model.drop_path_rate=0.1", "model.dropout=0.1",
		"data.limit_val=500", fmt.Sprintf("train.max_steps=%d", steps), "train.out_dir=" + t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestDataParallelMatchesOneProcess: 20 steps of the default MNIST config
// with every stochastic part on leave the same weights on 2 in-process
// ranks, and on 2 ranks × 2 micro-batches, as in one process, to float32
// summation order (≤ 1e-4 relative per tensor); the evaluation is the same.
func TestDataParallelMatchesOneProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("trains three times")
	}
	ctx := context.Background()
	base := defaultStochastic(t, 20)
	want, errs := runRanks(t, ctx, base, 0, false)
	noErrors(t, "one process", errs)
	for _, tc := range []struct{ ranks, accum int }{{2, 1}, {2, 2}} {
		cfg := base
		cfg.Train.OutDir = filepath.Join(t.TempDir(), "dp")
		cfg.Train.GradAccumSteps = tc.accum
		got, errs := runRanks(t, ctx, cfg, tc.ranks, false)
		noErrors(t, fmt.Sprintf("%d ranks × %d micro-batches", tc.ranks, tc.accum), errs)
		d, at := maxRelDiff(t, finalWeights(t, base.Train.OutDir), finalWeights(t, cfg.Train.OutDir))
		t.Logf("%d ranks × %d micro-batches vs one process after 20 steps: relative max |Δ| %.3g (%s)", tc.ranks, tc.accum, d, at)
		if d > 1e-4 || d == 0 {
			t.Errorf("relative max |Δ| %.3g at %s: want (0, 1e-4]", d, at)
		}
		if got.Last.Images != want.Last.Images || math.Abs(got.Last.Top1-want.Last.Top1) > 0.01 {
			t.Errorf("evaluation: %d images top-1 %.4f, one process %d images %.4f", got.Last.Images, got.Last.Top1, want.Last.Images, want.Last.Top1)
		}
	}
}

// TestGradAccumMatchesOneBatch: k micro-batches of one batch (their masks
// keyed by the rows' positions in the whole batch) train the model that one
// batch trains, to float32 summation order.
func TestGradAccumMatchesOneBatch(t *testing.T) {
	ctx := context.Background()
	base := tinyRun(t)
	base.Train.MaxSteps = 6
	_, errs := runRanks(t, ctx, base, 0, false)
	noErrors(t, "one batch", errs)
	for _, k := range []int{2, 4} {
		cfg := base
		cfg.Train.OutDir = filepath.Join(t.TempDir(), "accum")
		cfg.Train.GradAccumSteps = k
		_, errs := runRanks(t, ctx, cfg, 0, false)
		noErrors(t, fmt.Sprintf("%d micro-batches", k), errs)
		d, at := maxRelDiff(t, finalWeights(t, base.Train.OutDir), finalWeights(t, cfg.Train.OutDir))
		t.Logf("%d micro-batches vs one batch after 6 steps: relative max |Δ| %.3g (%s)", k, d, at)
		if d > 1e-4 || d == 0 {
			t.Errorf("%d micro-batches: relative max |Δ| %.3g at %s, want (0, 1e-4]", k, d, at)
		}
	}
}

// TestResumeWithDifferentRanks: a run started on 2 ranks, resumed on 1,
// then on 4, continues the trajectory of one uninterrupted process (the
// global batch is the same), across an epoch boundary.
func TestResumeWithDifferentRanks(t *testing.T) {
	ctx := context.Background()
	ref := tinyRun(t)
	ref.Train.MaxSteps = 12 // 8 steps per epoch
	_, errs := runRanks(t, ctx, ref, 0, false)
	noErrors(t, "one process", errs)
	cfg := ref
	cfg.Train.OutDir = filepath.Join(t.TempDir(), "resumed")
	for i, leg := range []struct{ ranks, steps int }{{2, 5}, {0, 9}, {4, 12}} {
		cfg.Train.MaxSteps = leg.steps
		_, errs := runRanks(t, ctx, cfg, leg.ranks, i > 0)
		noErrors(t, fmt.Sprintf("leg %d on %d ranks", i, leg.ranks), errs)
	}
	d, at := maxRelDiff(t, finalWeights(t, ref.Train.OutDir), finalWeights(t, cfg.Train.OutDir))
	t.Logf("2 → 1 → 4 ranks vs one process after 12 steps: relative max |Δ| %.3g (%s)", d, at)
	if d > 1e-4 {
		t.Errorf("relative max |Δ| %.3g at %s exceeds 1e-4", d, at)
	}
}

// TestInterruptStopsAllRanksAtOneStep: a stop request on one rank (its
// context cancelled before the first step) stops every rank after the same
// step, and rank 0 writes last.* there.
func TestInterruptStopsAllRanksAtOneStep(t *testing.T) {
	cfg := tinyRun(t)
	cs, err := dist.NewLocal(2)
	if err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for r, c := range cs {
		ctx := context.Background()
		if r == 1 {
			ctx = cancelled
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[r] = Run(ctx, cfg, Options{Log: quietLog(), Comm: c})
			if errs[r] != nil && !errors.Is(errs[r], ErrInterrupted) {
				c.Abort(1)
			}
		}()
	}
	wg.Wait()
	for r, err := range errs {
		if !errors.Is(err, ErrInterrupted) {
			t.Fatalf("rank %d: %v, want ErrInterrupted", r, err)
		}
	}
	if errs[0].Error() != errs[1].Error() {
		t.Fatalf("the ranks stopped apart: %q and %q", errs[0], errs[1])
	}
	st, err := LoadState(filepath.Join(cfg.Train.OutDir, LastState))
	if err != nil {
		t.Fatal(err)
	}
	if st.Step != 1 {
		t.Fatalf("last.train.safetensors at step %d, want 1 (%v)", st.Step, errs[0])
	}
}

// TestRankErrorAbortsJob: a rank that cannot read its data fails with that
// error and the others do not hang: they learn at once that it failed (a
// *RankFailedError naming it), before any later collective could see its
// abort.
func TestRankErrorAbortsJob(t *testing.T) {
	good := tinyRun(t)
	bad := good
	bad.Data.Root = filepath.Join(t.TempDir(), "missing")
	cs, err := dist.NewLocal(2)
	if err != nil {
		t.Fatal(err)
	}
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for r, c := range cs {
		cfg := good
		if r == 1 {
			cfg = bad
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[r] = Run(context.Background(), cfg, Options{Log: quietLog(), Comm: c})
			if errs[r] != nil {
				c.Abort(1)
			}
		}()
	}
	wg.Wait()
	var ae *dist.AbortError
	if errs[1] == nil || errors.As(errs[1], &ae) {
		t.Fatalf("rank 1: %v, want its own data error", errs[1])
	}
	var fe *RankFailedError
	if !errors.As(errs[0], &fe) || !slices.Equal(fe.Ranks, []int{1}) {
		t.Fatalf("rank 0: %v, want a *RankFailedError naming rank 1", errs[0])
	}
}
