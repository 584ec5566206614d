package data

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

// assemble puts each rank's batches back into global batches by their Rows.
func assemble(t *testing.T, global []snapshot, ranks [][]Batch, k int) {
	t.Helper()
	for r, bs := range ranks {
		if len(bs) != len(global) {
			t.Fatalf("rank %d: %d batches, want %d", r, len(bs), len(global))
		}
	}
	for s, g := range global {
		size := len(g.X) / g.N
		x := make([]float32, len(g.X))
		tg := make([]float32, len(g.Targets))
		labels, idx := make([]int, g.N), make([]int, g.N)
		seen := 0
		for _, bs := range ranks {
			b := bs[s]
			if b.Step != g.Step {
				t.Fatalf("step %d vs %d", b.Step, g.Step)
			}
			for i, p := range b.Rows {
				copy(x[p*size:(p+1)*size], b.X[i*size:(i+1)*size])
				copy(tg[p*k:(p+1)*k], b.Targets[i*k:(i+1)*k])
				labels[p], idx[p] = b.Labels[i], b.Indices[i]
				seen++
			}
		}
		if seen != g.N {
			t.Fatalf("step %d: ranks built %d rows, want %d", s, seen, g.N)
		}
		if !slices.Equal(x, g.X) || !slices.Equal(tg, g.Targets) || !slices.Equal(labels, g.Labels) || !slices.Equal(idx, g.Indices) {
			t.Fatalf("step %d: the ranks' slices differ from the one-process batch", s)
		}
	}
}

// rankBatches collects every batch of one epoch of l, deep-copied.
func rankBatches(t *testing.T, l *Loader, epoch int) []Batch {
	t.Helper()
	it := l.Epoch(epoch, 0)
	defer it.Close()
	var out []Batch
	for {
		b, ok, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return out
		}
		out = append(out, Batch{X: slices.Clone(b.X), Targets: slices.Clone(b.Targets), Labels: slices.Clone(b.Labels),
			Indices: slices.Clone(b.Indices), Rows: slices.Clone(b.Rows), N: b.N, Step: b.Step})
		b.Release()
	}
}

// TestShardedLoaderMatchesOneProcess: N ranks build, between them, exactly
// the global batches of one process, bit for bit, with every augmentation
// and each Mixup/CutMix mode on (partners sit in other ranks' halves).
func TestShardedLoaderMatchesOneProcess(t *testing.T) {
	ds := synth(t, 70, 3, 12, 12)
	for _, mode := range []MixMode{MixBatch, MixPair, MixElem} {
		for _, ranks := range []int{2, 4} {
			t.Run(fmt.Sprintf("%s/%d", mode, ranks), func(t *testing.T) {
				cfg := trainCfg(2)
				cfg.Mixup.Mode = mode
				cfg.Mixup.Prob.Set(0.9)
				one, err := NewLoader(ds, cfg)
				if err != nil {
					t.Fatal(err)
				}
				global := collect(t, one, 1, 0, true)
				per := make([][]Batch, ranks)
				for r := range per {
					c := cfg
					c.Rank, c.Ranks = r, ranks
					l, err := NewLoader(ds, c)
					if err != nil {
						t.Fatal(err)
					}
					per[r] = rankBatches(t, l, 1)
					if per[r][0].N != cfg.BatchSize/ranks {
						t.Fatalf("rank %d builds %d rows, want %d", r, per[r][0].N, cfg.BatchSize/ranks)
					}
				}
				assemble(t, global, per, cfg.NumClasses)
			})
		}
	}
}

// TestShardedEvalLoader: in evaluation the ranks take whole batches in turn.
func TestShardedEvalLoader(t *testing.T) {
	ds := synth(t, 21, 1, 10, 10)
	cfg := trainCfg(2)
	cfg.Train = false
	one, err := NewLoader(ds, cfg)
	if err != nil {
		t.Fatal(err)
	}
	global := collect(t, one, 0, 0, true)
	got := make([]snapshot, len(global))
	for r := 0; r < 2; r++ {
		c := cfg
		c.Rank, c.Ranks = r, 2
		l, err := NewLoader(ds, c)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range collect(t, l, 0, 0, true) {
			if s.Step%2 != r {
				t.Fatalf("rank %d built step %d", r, s.Step)
			}
			got[s.Step] = s
		}
	}
	sameBatches(t, "2 eval ranks", global, got)
}

func TestSliceErrors(t *testing.T) {
	var se *ShardError
	if _, err := Slice(12, 0, 4); !errors.As(err, &se) || se.Batch != 12 || se.Ranks != 4 {
		t.Fatalf("Slice(12, 0, 4): %v, want *ShardError", err)
	}
	if _, err := Slice(8, 2, 2); err == nil {
		t.Fatal("rank 2 of 2 accepted")
	}
	rows, err := Slice(8, 1, 2)
	if err != nil || fmt.Sprint(rows) != "[2 3 4 5]" {
		t.Fatalf("Slice(8, 1, 2) = %v, %v", rows, err)
	}
	cfg := trainCfg(1)
	cfg.Rank, cfg.Ranks = 0, 3
	if _, err := NewLoader(synth(t, 20, 1, 10, 10), cfg); !errors.As(err, &se) {
		t.Fatalf("batch 8 on 3 ranks: %v, want *ShardError", err)
	}
	m, err := NewMixup(trainCfg(1).Mixup, 10)
	if err != nil {
		t.Fatal(err)
	}
	x, labels := constBatch(2, 1, 4, 4)
	var me *MirrorError
	if _, err := m.ApplyRows(x, labels, 1, 4, 4, make([]float32, 20), 1, []int{0, 1}, 4); !errors.As(err, &me) {
		t.Fatalf("rows [0 1] of 4: %v, want *MirrorError", err)
	}
}
