package memory_test

import (
	"testing"

	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/internal/memory"
	"github.com/vitgo/vit/layers"
)

// TestDecodedFolderEstimate: a folder data set's estimate counts its
// decodes in flight (workers × an image at the decoded-bytes limit, at
// most the decode budget), which the pixel count alone left out: -dry-run
// said under a MiB of data for 8 workers decoding 16-bit 49 MP PNGs.
func TestDecodedFolderEstimate(t *testing.T) {
	m := layers.Config{ImgSize: layers.Size2{28, 28}, PatchSize: 7, InChans: 1, EmbedDim: 16, Depth: 1, NumHeads: 2, MLPRatio: 2, NumClasses: 10}.WithDefaults()
	d := data.DefaultConfig()
	d.Name, d.Workers = data.NameFolder, 8
	e := memory.Of(memory.Spec{Model: m, Data: d, Batch: 8, EvalBatch: 8, Threads: 1, Training: true})
	perImage := data.MaxDecodedBytes(data.DefaultMaxPixels) + 3*data.DefaultMaxPixels
	want := min(8*perImage, data.SharedBudget().Total())
	if e.Decode != want || e.Peak < want {
		t.Fatalf("Decode %d, Peak %d; want %d counted", e.Decode, e.Peak, want)
	}
	d.Name = data.NameMNIST
	if e := memory.Of(memory.Spec{Model: m, Data: d, Batch: 8, EvalBatch: 8, Threads: 1, Training: true}); e.Decode != 0 {
		t.Fatalf("MNIST: Decode %d, want 0", e.Decode)
	}
}
