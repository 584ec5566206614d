package train

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/vitgo/vit/graph/kernels"
)

// goldenDigests were recorded before train.Step replaced the loop's inline
// step (issue #12), at commit 109a74d. Any change to the numbers of a training step — the
// order of the gradient read, clipping, the AdamW update, EMA, the data or
// random streams — shows here as a changed digest.
var goldenDigests = map[string]struct{ weights, moments, ema string }{
	"default": {
		weights: "35be07022c95f6e4d1702eca428ab76a9c138a64ed65fbdb6c33023ffbe416b9",
		moments: "968bbeacabeeaf8f8972819b1caabf0ec37594c4756bda05fb4187adabcbadd2",
	},
	"stochastic": {
		weights: "a276ce76ecb51827edbb5e00f9e3e546d4f42dfba94696c3d2c36d76d6a56160",
		moments: "6157935e1b59b91002a3521b82727835f41508ff70a667f60672912af73a8b27",
		ema:     "bf198a6d3afa439a56896379e4e811f6efc5f741b363a7cd2086a6835d6b1c1c",
	},
}

// digest hashes a set of named tensors: the names in sorted order, each
// followed by its values' float32 bits, little-endian.
func digest(ts map[string][]float32) string {
	names := make([]string, 0, len(ts))
	for n := range ts {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	var b [4]byte
	for _, n := range names {
		h.Write([]byte(n))
		for _, v := range ts[n] {
			binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
			h.Write(b[:])
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestGoldenSteps runs the patch-4 MNIST config (configs/mnist_vit_tiny_p4.yaml,
// the default until issue #15, whose recipe the digests were recorded with) for
// its first 50 steps on real MNIST, and for 20 steps with Mixup, CutMix,
// dropout, drop path and EMA on, and requires the weights, the AdamW moments and the
// EMA weights to hash to digests recorded before the refactor of issue #12:
// results stay bit-identical. The schedule is the full run's (max_steps
// stops early; the epoch length is that of all 60,000 images); only the
// validation set is limited.
func TestGoldenSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("100 steps of the default model")
	}
	if !strings.HasPrefix(kernels.Backend(), "native") {
		t.Skip("the digests are the native SGEMM's bits; " + kernels.Backend() + " sums in its own order")
	}
	for _, tc := range []struct {
		name  string
		steps int
		set   []string
	}{
		{"default", 50, nil},
		{"stochastic", 20, []string{"mixup.mixup_alpha=0.8", "mixup.cutmix_alpha=1.0", "model.dropout=0.1",
			"model.drop_path_rate=0.1", "optim.ema=true"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := append([]string{"train.max_steps=" + strconv.Itoa(tc.steps), "data.limit_val=64", "train.out_dir=" + t.TempDir()}, tc.set...)
			cfg, err := LoadConfig(filepath.Join("..", "configs", "mnist_vit_tiny_p4.yaml"), set)
			if err != nil {
				t.Fatal(err)
			}
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
			res, err := Run(context.Background(), cfg, Options{Log: quietLog()})
			if err != nil {
				t.Fatal(err)
			}
			if res.Steps != tc.steps {
				t.Fatalf("%d steps, want %d", res.Steps, tc.steps)
			}
			st, err := LoadState(filepath.Join(cfg.Train.OutDir, LastState))
			if err != nil {
				t.Fatal(err)
			}
			moments := map[string][]float32{}
			for n, v := range st.M {
				moments["m."+n] = v
			}
			for n, v := range st.V {
				moments["v."+n] = v
			}
			var got = goldenDigests[tc.name]
			got.ema = ""
			got.weights, got.moments = digest(finalWeights(t, cfg.Train.OutDir)), digest(moments)
			if st.EMA != nil {
				got.ema = digest(st.EMA)
			}
			want := goldenDigests[tc.name]
			if got != want {
				t.Errorf("after %d steps:\n got  %+v\n want %+v", tc.steps, got, want)
			}
		})
	}
}
