package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/vitgo/vit/experiments/internal/harness"
	"github.com/vitgo/vit/layers"
)

// What every config shares: mlp_ratio 4, 10 classes (the peer's MNIST
// head, at every shape).
const (
	numClasses = 10
	mlpRatio   = 4
)

// MNIST's normalisation (torchvision's), applied to the random pixels.
const mnistMean, mnistStd = 0.1307, 0.3081

// benchConfig is one model size and input shape of the benchmark, with the
// batch and timed steps it runs by default (-batch and -steps override them).
type benchConfig struct {
	Name              string
	Dim, Depth, Heads int
	Img, Patch, Chans int // square images of Img pixels, Chans channels, Patch×Patch patches
	Batch, Steps      int
}

// benchConfigs are the sizes the performance goals name: the MNIST-shaped
// TINY and SMALL (28×28, patch 4: 50 tokens), and the ImageNet shapes with
// three channels (224×224, patch 16: 197 tokens; 384×384: 577), whose steps
// are long, so they time fewer of them. b16-384 is the fine-tune memory case.
var benchConfigs = map[string]benchConfig{
	"tiny":    {"tiny", 64, 4, 4, 28, 4, 1, 128, 30},
	"small":   {"small", 192, 6, 3, 28, 4, 1, 128, 30},
	"s16":     {"s16", 384, 12, 6, 224, 16, 3, 32, 5},
	"b16":     {"b16", 768, 12, 12, 224, 16, 3, 16, 3},
	"b16-384": {"b16-384", 768, 12, 12, 384, 16, 3, 16, 2},
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
// GELU, qkv bias, zero-init head, LayerNorm eps 1e-6, no dropout) at b's
// input.
func (b benchConfig) model() layers.Config {
	c := layers.DefaultConfig()
	c.ImgSize, c.PatchSize, c.InChans, c.NumClasses = layers.Size2{b.Img, b.Img}, b.Patch, b.Chans, numClasses
	c.EmbedDim, c.Depth, c.NumHeads, c.MLPRatio = b.Dim, b.Depth, b.Heads, mlpRatio
	return c
}

// forwardFLOPs is the matmul FLOPs (2·m·n·k) of one image's forward pass,
// as vit_ref.py's forward_flops counts them. A training step counts 3× this
// (backward ≈ 2× forward).
func forwardFLOPs(c layers.Config) float64 { return harness.ForwardFLOPs(c).Total() }

// withRun returns b with the batch and timed steps of the command line, where
// they are set (positive).
func (b benchConfig) withRun(batch, steps int) benchConfig {
	if batch > 0 {
		b.Batch = batch
	}
	if steps > 0 {
		b.Steps = steps
	}
	return b
}
