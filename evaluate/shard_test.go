package evaluate

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/dist"
	"github.com/vitgo/vit/layers"
)

// synthSet is n random 28×28 grey images with labels i mod 10.
func synthSet(t *testing.T, n int) data.Dataset {
	t.Helper()
	pix := make([]uint8, n*28*28)
	for i := range pix {
		pix[i] = uint8((i*2654435761)>>13) ^ uint8(i/97)
	}
	labels := make([]int, n)
	classes := make([]string, 10)
	for i := range labels {
		labels[i] = i % 10
	}
	for i := range classes {
		classes[i] = fmt.Sprint(i)
	}
	ds, err := data.NewInMemory("synthetic", classes, 1, 28, 28, pix, labels)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// TestShardedEvalEqualsOneProcess: an evaluation sharded over 2 or 3 ranks
// gives every rank the one-process result exactly (counts, confusion, and
// the loss to the last bit), the remainder batch included.
func TestShardedEvalEqualsOneProcess(t *testing.T) {
	mc := tinyConfig()
	ds := synthSet(t, 100)
	lc := data.LoaderConfig{BatchSize: 16, ImgH: 28, ImgW: 28, Seed: 1, Workers: 1, NumClasses: 10,
		Augment: data.AugmentConfig{CropPadding: 2}, Mixup: data.MixupConfig{MixupAlpha: 0.8, CutmixAlpha: 1, LabelSmoothing: 0.1}}
	eval := func(c dist.Comm) Result {
		m, err := layers.New(mc, tensor.Float32, 7)
		if err != nil {
			t.Error(err)
			return Result{}
		}
		e, err := New(m, lc.BatchSize)
		if err != nil {
			t.Error(err)
			return Result{}
		}
		defer e.Close()
		l := lc
		if c != nil {
			e.Comm = c
			l.Rank, l.Ranks = c.Rank(), c.Size()
		}
		loader, err := data.NewLoader(ds, l)
		if err != nil {
			t.Error(err)
			return Result{}
		}
		r, err := e.Run(context.Background(), loader, nil)
		if err != nil {
			t.Error(err)
		}
		r.ImgPerS = 0
		return r
	}
	want := eval(nil)
	if want.Images != 100 {
		t.Fatalf("one process counted %d images", want.Images)
	}
	for _, n := range []int{2, 3} {
		cs, err := dist.NewLocal(n)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]Result, n)
		var wg sync.WaitGroup
		for r, c := range cs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got[r] = eval(c)
			}()
		}
		wg.Wait()
		for r, g := range got {
			if !reflect.DeepEqual(g, want) {
				t.Errorf("%d ranks, rank %d: %+v\nwant %+v", n, r, g, want)
			}
		}
	}
}
