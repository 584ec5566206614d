package memest_test

import (
	"testing"

	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/memest"
)

// TestDecodedFolderEstimate: a data set of image files (folder, csv) counts
// its decodes in flight (workers × an image at the decoded-bytes limit, at
// most the decode budget), which the pixel count alone left out: -dry-run
// said under a MiB of data for 8 workers decoding 16-bit 49 MP PNGs. The
// data sets held in memory count none.
func TestDecodedFolderEstimate(t *testing.T) {
	m := layers.Config{ImgSize: layers.Size2{28, 28}, PatchSize: 7, InChans: 1, EmbedDim: 16, Depth: 1, NumHeads: 2, MLPRatio: 2, NumClasses: 10}.WithDefaults()
	perImage := data.MaxDecodedBytes(data.DefaultMaxPixels) + 3*data.DefaultMaxPixels
	decoded := min(8*perImage, data.SharedBudget().Total())
	for _, tc := range []struct {
		name data.DatasetName
		want int64
	}{
		{data.NameFolder, decoded}, {data.NameCSV, decoded}, {data.NameMNIST, 0}, {data.NameCIFAR10, 0},
	} {
		d := data.DefaultConfig()
		d.Name, d.Workers = tc.name, 8
		e := memest.Of(memest.Spec{Model: m, Data: d, Batch: 8, EvalBatch: 8, Threads: 1, Training: true})
		if e.Decode != tc.want || e.Peak < tc.want {
			t.Errorf("%s: Decode %d, Peak %d; want %d counted", tc.name, e.Decode, e.Peak, tc.want)
		}
	}
}

// TestOptimizerStateFromOptim: the optimizer's part is optim's slots per
// trained parameter, 4 bytes each, and as much again while a checkpoint is
// written (a name optim does not know counts as AdamW); frozen parameters
// have none.
func TestOptimizerStateFromOptim(t *testing.T) {
	m := layers.Config{ImgSize: layers.Size2{28, 28}, PatchSize: 7, InChans: 1, EmbedDim: 16, Depth: 1, NumHeads: 2, MLPRatio: 2, NumClasses: 10}.WithDefaults()
	n := int64(layers.CountParams(m))
	head := int64(16*10 + 10)
	for _, tc := range []struct {
		name   string
		opt    string
		frozen map[string]bool
		want   int64
	}{
		{"all trained", "", nil, 8 * n},
		{"adamw by name", "adamw", nil, 8 * n},
		{"an optimizer optim does not state", "rmsprop_tf", nil, 8 * n},
		{"lamb: two moments", "lamb", nil, 8 * n},
		{"sgd: one momentum buffer", "sgd", nil, 4 * n},
		{"linear probe", "", frozenAllBut(m, "head.weight", "head.bias"), 8 * head},
	} {
		e := memest.Of(memest.Spec{Model: m, Data: data.DefaultConfig(), Batch: 8, EvalBatch: 8, Threads: 1, Training: true,
			Optimizer: tc.opt, Frozen: tc.frozen})
		grads := 4 * n
		if tc.frozen != nil {
			grads = 4 * head
		}
		if e.Optimizer != tc.want || e.Save != tc.want || e.Grads != grads {
			t.Errorf("%s: optimizer %d, save %d, grads %d; want %d, %d, %d", tc.name, e.Optimizer, e.Save, e.Grads, tc.want, tc.want, grads)
		}
	}
}

func frozenAllBut(m layers.Config, keep ...string) map[string]bool {
	out := map[string]bool{}
	for _, s := range layers.ParamShapes(m) {
		out[s.Name] = true
	}
	for _, k := range keep {
		delete(out, k)
	}
	return out
}
