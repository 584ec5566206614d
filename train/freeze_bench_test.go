//go:build unix

package train

import (
	"flag"
	"slices"
	"testing"
	"time"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/optim"
)

var freezeRounds = flag.Int("freeze.rounds", 5, "alternating rounds of BenchmarkFrozenStep")

// BenchmarkFrozenStep compares the training step's throughput with every
// parameter trained, with the lower half of the blocks frozen
// (finetune.freeze: patch_embed, cls_token, pos_embed, blocks.[0-2].*) and
// as a linear probe (finetune.linear_probe), on the model of
// configs/mnist_finetune_56.yaml (56×56, patch 4, 197 tokens, dim 64, depth
// 6) at its batch of 64. The three run in turn, -freeze.rounds rounds of
// three timed steps each after a warm-up step, so that a change in the
// machine's load falls on all of them; it reports each one's median img/s
// over the rounds, by the wall clock and by the process's CPU time. Run it
// with -benchtime 1x:
//
//	go test ./train -run '^$' -bench FrozenStep -benchtime 1x
func BenchmarkFrozenStep(b *testing.B) {
	c := layers.DefaultConfig()
	c.ImgSize, c.PatchSize, c.InChans = layers.Size2{56, 56}, 4, 1
	c.EmbedDim, c.Depth, c.NumHeads, c.MLPRatio, c.NumClasses = 64, 6, 4, 2, 10
	c.DropPathRate = 0.05
	const batch, steps = 64, 3
	modes := []struct {
		name string
		fc   FinetuneConfig
	}{
		{"full", FinetuneConfig{}},
		{"lower_half_frozen", FinetuneConfig{Freeze: []string{"patch_embed.*", "cls_token", "pos_embed", "blocks.[0-2].*"}}},
		{"linear_probe", FinetuneConfig{LinearProbe: true}},
	}
	x, tg := randomBatch(c, batch)
	stepsOf := make([]*Step, len(modes))
	for i, md := range modes {
		frozen, err := FrozenNames(Config{Model: c, Finetune: md.fc})
		if err != nil {
			b.Fatal(err)
		}
		m, err := layers.New(c, tensor.Float32, 0)
		if err != nil {
			b.Fatal(err)
		}
		if stepsOf[i], err = NewStep(m, StepConfig{Batch: batch, Optim: optim.DefaultConfig(), StepsPerEpoch: 100, TotalSteps: 100, Frozen: frozen}); err != nil {
			b.Fatal(err)
		}
		defer stepsOf[i].Close()
		if _, err := stepsOf[i].Take(x, tg, 0); err != nil { // warm-up
			b.Fatal(err)
		}
	}
	wall := make([][]float64, len(modes))
	cpu := make([][]float64, len(modes))
	b.ResetTimer()
	for r := range *freezeRounds {
		for i, s := range stepsOf {
			t0, c0 := time.Now(), cpuTime()
			for k := range steps {
				if _, err := s.Take(x, tg, 1+r*steps+k); err != nil {
					b.Fatal(err)
				}
			}
			imgs := float64(steps * batch)
			wall[i] = append(wall[i], imgs/time.Since(t0).Seconds())
			cpu[i] = append(cpu[i], imgs/(cpuTime()-c0).Seconds())
		}
	}
	for i, md := range modes {
		b.ReportMetric(median(wall[i]), md.name+"_img/s")
		b.ReportMetric(median(cpu[i]), md.name+"_img/cpu-s")
	}
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
