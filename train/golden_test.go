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

// goldenDigests are the bits of the first training steps, the same on every
// CPU and kernel (graph/kernels' Bits contract: the portable Go code, AVX2
// and AVX-512, any core count). Any change to the numbers of a training
// step — the order of the gradient read, clipping, the AdamW update, EMA,
// the data or random streams, a kernel's operations — shows here as a
// changed digest.
var goldenDigests = map[string]struct{ weights, moments, ema string }{
	"default": {
		weights: "7ca94f7ac75205eb1a19f970eb11388f4d13af8a4ab0043b2d036d2342e0a2fb",
		moments: "a1dc3ad4b742b9f1621070d5f44c294a00dd100dee8ae5230a7e709aa85adfb9",
	},
	"bf16": {
		weights: "f1961c9f06d5a3b4c6578919701a9815a7d1d3480abb0ee76fcc47860f46b40a",
		moments: "eb34ccfeb36cd950f83762eff3a7beff94977ee7f5dd7f281363f26db194545e",
	},
	"stochastic": {
		weights: "412e465440622a31f16f4c997b582e6f61f8e03c79c5b1a2dca42609e24dcb0a",
		moments: "53bdcdfdf57cf0d608827c2a2fbbd313a5045548bdead028dfcd7a06c368c40d",
		ema:     "8d6324b6e7db0b237c2a9ea3490b538b71b160b475aab7aacc9a6382042a97c4",
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

// TestGoldenSteps runs the patch-4 MNIST config (configs/mnist_vit_tiny_p4.yaml)
// for its first 50 steps on real MNIST, and for 20 steps with Mixup, CutMix,
// dropout, drop path and EMA on, and requires the weights, the AdamW moments
// and the EMA weights to hash to goldenDigests, on every CPU and kernel
// (.ci/run runs it once per kernel the CPU has, and under -tags purego). The
// schedule is the full run's (max_steps stops early; the epoch length is that
// of all 60,000 images); only the validation set is limited. The bf16
// variants that recompute activations must give bf16's digests; they check
// the graph, not the kernel, and are skipped on the portable kernel.
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
		// bfloat16 products: the same bits from AMX and from every
		// emulating tile (VIT_BF16_KERNEL and GODEBUG pick them in CI).
		{"bf16", 5, []string{"train.precision=bf16"}},
		// recomputing fc1's output in the backward pass changes no bit:
		// bf16's digests.
		{"bf16/recompute", 5, []string{"train.precision=bf16", "train.recompute=mlp"}},
		// nor does recomputing all of a block but its input and
		// attention's output.
		{"bf16/block", 5, []string{"train.precision=bf16", "train.recompute=block"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if strings.Contains(tc.name, "/") && kernels.ISA() == "go" {
				// A variant checks the graph (what it keeps and computes
				// again), not the kernel: its bits are its base case's on
				// every kernel, and the portable kernel takes 100 s a variant.
				t.Skip("recomputing is checked on the vector kernels' legs; the portable kernel pins the base case's digests")
			}
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
			key, _, _ := strings.Cut(tc.name, "/") // a variant pins its base case's bits
			var got = goldenDigests[key]
			got.ema = ""
			got.weights, got.moments = digest(finalWeights(t, cfg.Train.OutDir)), digest(moments)
			if st.EMA != nil {
				got.ema = digest(st.EMA)
			}
			want := goldenDigests[key]
			if got != want {
				t.Errorf("after %d steps:\n got  %+v\n want %+v", tc.steps, got, want)
			}
		})
	}
}
