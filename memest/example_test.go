package memest_test

import (
	"fmt"

	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/memest"
)

// The estimate of training a small ViT on MNIST, by part: the model's
// weights, gradients and AdamW's two moments, the data set held in memory,
// and the peak the process's RSS is expected to reach.
func ExampleOf() {
	m := layers.Config{ImgSize: layers.Size2{28, 28}, PatchSize: 7, InChans: 1, EmbedDim: 64, Depth: 4, NumHeads: 4, MLPRatio: 2, NumClasses: 10}.WithDefaults()
	e := memest.Of(memest.Spec{Model: m, Data: data.DefaultConfig(), Batch: 128, EvalBatch: 256, Threads: 4, Training: true})
	fmt.Println("parameters:", e.Params, "bytes")
	fmt.Println("gradients:", e.Grads, "bytes")
	fmt.Println("optimizer state:", e.Optimizer, "bytes")
	fmt.Println("data set:", e.Data, "bytes")
	fmt.Println("peak over 100 MB:", e.Peak > 100e6)
	// Output:
	// parameters: 556072 bytes
	// gradients: 556072 bytes
	// optimizer state: 1112144 bytes
	// data set: 55440000 bytes
	// peak over 100 MB: true
}
