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
	"testing"
)

// goldenDigests were recorded before train.Step replaced the loop's inline
// step (issue #12). Any change to the numbers of a training step — the
// order of the gradient read, clipping, the AdamW update, EMA, the data or
// random streams — shows here as a changed digest.
var goldenDigests = map[string]struct{ weights, moments, ema string }{
	"default": {
		weights: "35be07022c95f6e4d1702eca428ab76a9c138a64ed65fbdb6c33023ffbe416b9",
		moments: "968bbeacabeeaf8f8972819b1caabf0ec37594c4756bda05fb4187adabcbadd2",
	},
	"stochastic": {
		weights: "84db018fe7089889ac23f740c54eb17ffe693f2d5e8de294b1f64ef83400ced1",
		moments: "9432c6e884b8c9a7f1bac67948d87d23c17f8de87414bab430a4e8778b9fd8df",
		ema:     "509d489177dcd1c9f04c55a5d8b13553535c8cec2a5b8ee20bb2ca595f1dc9cb",
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

// TestGoldenSteps runs the default config (configs/mnist_vit_tiny.yaml) for
// its first 50 steps on real MNIST, and again with Mixup, CutMix, dropout,
// drop path and EMA on, and requires the weights, the AdamW moments and the
// EMA weights to hash to digests recorded before the refactor of issue #12:
// results stay bit-identical. The schedule is the full run's (max_steps
// stops early; the epoch length is that of all 60,000 images); only the
// validation set is limited.
func TestGoldenSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("100 steps of the default model")
	}
	for _, tc := range []struct {
		name string
		set  []string
	}{
		{"default", nil},
		{"stochastic", []string{"mixup.mixup_alpha=0.8", "mixup.cutmix_alpha=1.0", "model.dropout=0.1",
			"model.drop_path_rate=0.1", "optim.ema=true"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := append([]string{"train.max_steps=50", "data.limit_val=64", "train.out_dir=" + t.TempDir()}, tc.set...)
			cfg, err := LoadConfig(filepath.Join("..", "configs", "mnist_vit_tiny.yaml"), set)
			if err != nil {
				t.Fatal(err)
			}
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
			res, err := Run(context.Background(), cfg, Options{Log: quietLog()})
			if err != nil {
				t.Fatal(err)
			}
			if res.Steps != 50 {
				t.Fatalf("%d steps, want 50", res.Steps)
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
				t.Errorf("after 50 steps:\n got  %+v\n want %+v", got, want)
			}
		})
	}
}
