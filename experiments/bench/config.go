package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/vitgo/vit/experiments/internal/harness"
	"github.com/vitgo/vit/layers"
)

// The input every config shares: MNIST-shaped, 4×4 patches (49 patches + CLS
// = 50 tokens), mlp_ratio 4, 10 classes.
const (
	imgSide    = 28
	patchSide  = 4
	inChans    = 1
	numClasses = 10
	mlpRatio   = 4
	warmup     = 3 // untimed steps before the timed ones, as vit_ref.py does
)

// MNIST's normalisation (torchvision's), applied to the random pixels.
const mnistMean, mnistStd = 0.1307, 0.3081

// benchConfig is one model size of the benchmark.
type benchConfig struct {
	Name              string
	Dim, Depth, Heads int
}

// benchConfigs are the sizes the performance goals name.
var benchConfigs = map[string]benchConfig{
	"tiny":  {"tiny", 64, 4, 4},
	"small": {"small", 192, 6, 3},
}

func configNames() []string {
	var n []string
	for k := range benchConfigs {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// parseConfigs reads a comma-separated list of config names.
func parseConfigs(s string) ([]benchConfig, error) {
	var out []benchConfig
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(strings.ToLower(name))
		if name == "" {
			continue
		}
		c, ok := benchConfigs[name]
		if !ok {
			return nil, fmt.Errorf("unknown config %q (have %s)", name, strings.Join(configNames(), ", "))
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no config named in %q", s)
	}
	return out, nil
}

// model is the layers config of b: the defaults (timm's: CLS readout, exact
// GELU, qkv bias, zero-init head, LayerNorm eps 1e-6, no dropout) at the
// shared input.
func (b benchConfig) model() layers.Config {
	c := layers.DefaultConfig()
	c.ImgSize, c.PatchSize, c.InChans, c.NumClasses = layers.Size2{imgSide, imgSide}, patchSide, inChans, numClasses
	c.EmbedDim, c.Depth, c.NumHeads, c.MLPRatio = b.Dim, b.Depth, b.Heads, mlpRatio
	return c
}

// forwardFLOPs is the matmul FLOPs (2·m·n·k) of one image's forward pass,
// as vit_ref.py's forward_flops counts them. A training step counts 3× this
// (backward ≈ 2× forward).
func forwardFLOPs(c layers.Config) float64 { return harness.ForwardFLOPs(c).Total() }
