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

// goldenCase is one run of the golden config: its steps, its -set
// overrides, and the key of the digests it must give (a variant that
// recomputes activations gives its base case's bits).
type goldenCase struct {
	name  string
	steps int
	set   []string
}

// TestGoldenSteps runs the patch-4 MNIST config (configs/mnist_vit_tiny_p4.yaml)
// for its first 50 steps on real MNIST, and for 20 steps with Mixup, CutMix,
// dropout, drop path and EMA on, and requires the weights, the AdamW moments
// and the EMA weights to hash to goldenDigests, on every CPU and kernel
// (.ci/run runs it once per vector kernel the CPU has; the portable kernels
// run TestGoldenStepsShort). The schedule is the full run's (max_steps stops
// early; the epoch length is that of all 60,000 images); only the validation
// set is limited. The bf16 variants that recompute activations must give
// bf16's digests; they check the graph, not the kernel, and are skipped on
// the portable kernel.
func TestGoldenSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("100 steps of the default model")
	}
	runGolden(t, goldenDigests, []goldenCase{
		{"default", 50, nil},
		{"stochastic", 20, stochasticSet},
		// bfloat16 products: the same bits from AMX and from every
		// emulating tile (VIT_BF16_KERNEL and GODEBUG pick them in CI).
		{"bf16", 5, []string{"train.precision=bf16"}},
		// recomputing fc1's output in the backward pass changes no bit:
		// bf16's digests.
		{"bf16/recompute", 5, []string{"train.precision=bf16", "train.recompute=mlp"}},
		// nor does recomputing all of a block but its input and
		// attention's output.
		{"bf16/block", 5, []string{"train.precision=bf16", "train.recompute=block"}},
	})
}

// stochasticSet turns on every random part of a step: Mixup, CutMix,
// dropout, drop path, and the EMA beside them.
var stochasticSet = []string{"mixup.mixup_alpha=0.8", "mixup.cutmix_alpha=1.0", "model.dropout=0.1",
	"model.drop_path_rate=0.1", "optim.ema=true"}

// shortDigests are the bits of the first steps of TestGoldenSteps' runs:
// the same runs (the schedule is the full run's), stopped earlier.
var shortDigests = map[string]struct{ weights, moments, ema string }{
	"default": {
		weights: "80415f32696e9284e589a7d57a1c627ff76d9079a10c828bac6dac2d6ac49186",
		moments: "9e7b1d080d3571dda28fbc9ee318e85bcf91defe8e780c13e4b6710493011e85",
	},
	"stochastic": {
		weights: "4bbc6fe34902648e70e47af3a9223347d432dc862aafea00acccd1e393b3700b",
		moments: "998788d25f5fa2a3d725f8c870de690ddf208f95ad9817c7b200a7659abe582d",
		ema:     "22c17eaf40d091e1fb0cfd0e65a2cfa6ebd7086089ab9d934d996e313a55fe52",
	},
	"bf16": {
		weights: "ca90777ff0a12cb588eaef8fb23d56b71b2c869f1459ada990b3e0b2794bbf1f",
		moments: "3c730b2f0d414bafc646849657a8e01f0d33571f8e21eb81133d84667d8bb78f",
	},
}

// TestGoldenStepsShort pins the first few steps of TestGoldenSteps' runs.
// The portable kernels (pure Go with an exact FMA, and -tags purego) take
// 10 to 30 times the vector kernels' time: CI runs this short test on them,
// and the vector kernels pass both, so every kernel gives the same bits
// through these steps and the vector kernels through the long runs.
func TestGoldenStepsShort(t *testing.T) {
	if testing.Short() {
		t.Skip("a few steps of the default model")
	}
	// Validation changes no weight: 8 images are enough to run it.
	few := "data.limit_val=8"
	runGolden(t, shortDigests, []goldenCase{
		{"default", 3, []string{few}},
		{"stochastic", 2, append([]string{few}, stochasticSet...)},
		{"bf16", 1, []string{few, "train.precision=bf16"}},
	})
}

// runGolden runs each case of the golden config and compares its weights,
// AdamW moments and EMA with want[the case's base name].
func runGolden(t *testing.T, want map[string]struct{ weights, moments, ema string }, cases []goldenCase) {
	t.Helper()
	if !strings.HasPrefix(kernels.Backend(), "native") {
		t.Skip("the digests are the native SGEMM's bits; " + kernels.Backend() + " sums in its own order")
	}
	for _, tc := range cases {
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
			var got = want[key]
			got.ema = ""
			got.weights, got.moments = digest(finalWeights(t, cfg.Train.OutDir)), digest(moments)
			if st.EMA != nil {
				got.ema = digest(st.EMA)
			}
			if got != want[key] {
				t.Errorf("after %d steps:\n got  %+v\n want %+v", tc.steps, got, want[key])
			}
		})
	}
}
