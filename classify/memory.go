package classify

import (
	"fmt"
	"math/bits"

	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/internal/memory"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/memest"
)

// MemoryError refuses Options whose lanes (PoolSize lanes of graphs up to
// MaxBatch) would need more memory than the machine has, before anything
// is allocated. Need and Have are in bytes; Source says where Have comes
// from.
type MemoryError struct {
	PoolSize, MaxBatch int
	Need, Have         int64
	Source             string
}

func (e *MemoryError) Error() string {
	return fmt.Sprintf("classify: %d lane(s) of batch %d need about %s (memest's estimate), more than the %s available (%s): lower the batch or the pool",
		e.PoolSize, e.MaxBatch, memory.FormatBytes(e.Need), memory.FormatBytes(e.Have), e.Source)
}

// graphBytes is a graph's own memory (nodes, plans, the arena's
// bookkeeping) per block and per graph, beyond its activations: an upper
// bound of the heap classify.Load takes per lane and graph
// (TestEstimateLanesCoversHeap).
const graphBytes = 96 << 10

// EstimateLanes is the memory of a classifier for model m: the weights,
// poolSize lanes each holding the evaluation graphs up to maxBatch (the
// estimate the trainer's -dry-run makes for train.eval_batch_size) and its
// staging buffer and the graphs themselves, and ClassifyFiles' loader at loaderBatch images a batch
// (0 = none), in bytes.
func EstimateLanes(m layers.Config, poolSize, maxBatch, loaderBatch int) int64 {
	lane := memest.Of(memest.Spec{Model: m, Data: data.Config{Name: data.NameFolder}, EvalBatch: maxBatch, Threads: 1})
	pixels := int64(m.InChans) * int64(m.ImgSize[0]) * int64(m.ImgSize[1])
	graphs := int64(bits.Len(uint(maxBatch-1))) + 1 // batch 1, 2, 4, …, maxBatch
	perLane := lane.EvalAct + 4*int64(maxBatch)*pixels + graphs*graphBytes*int64(m.Depth+1)
	loader := 4 * int64(loaderBatch) * (pixels + int64(m.NumClasses)) * 4 // prefetch 2, plus two being filled
	return lane.Params + lane.Runtime + int64(poolSize)*perLane + loader
}

// checkLanes refuses lanes the machine cannot hold (memory.Available).
func checkLanes(m layers.Config, poolSize, maxBatch int) error {
	have, source := memory.Available()
	need := EstimateLanes(m, poolSize, maxBatch, 0)
	if have > 0 && need > have {
		return &MemoryError{PoolSize: poolSize, MaxBatch: maxBatch, Need: need, Have: have, Source: source}
	}
	return nil
}
