package classify_test

import (
	"runtime"
	"testing"

	"github.com/vitgo/vit/classify"
)

// loadHeap returns the heap that Load with o takes (measured after a GC,
// so it does not depend on timing) and the estimate Load checked.
func loadHeap(t *testing.T, o classify.Options) (heap, est int64) {
	t.Helper()
	gc := func() { runtime.GC(); runtime.GC() } // the second empties sync.Pools' victim caches
	gc()
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	c, err := classify.Load(tiny(t), o)
	if err != nil {
		t.Fatal(err)
	}
	gc()
	runtime.ReadMemStats(&b)
	defer c.Close()
	return int64(b.HeapAlloc) - int64(a.HeapAlloc), classify.EstimateLanes(c.Meta().Model, o.PoolSize, o.MaxBatch, 0)
}

// TestEstimateLanesCoversHeap: what each further lane costs in heap (its
// graphs up to MaxBatch, their arena, its staging buffer) is within what
// the estimate Load checks adds for it, so -pool and -batch are refused by
// a number that covers them.
func TestEstimateLanesCoversHeap(t *testing.T) {
	for _, batch := range []int{1, 64} {
		h1, e1 := loadHeap(t, classify.Options{PoolSize: 1, MaxBatch: batch})
		h21, e21 := loadHeap(t, classify.Options{PoolSize: 21, MaxBatch: batch})
		if heap, est := (h21-h1)/20, (e21-e1)/20; heap > est {
			t.Errorf("batch %d: a lane takes %d bytes of heap, over the estimate's %d", batch, heap, est)
		}
	}
}
