package classify

import (
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"sync"
	"testing"

	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/layers"
)

// TestInt8KeepsQuantizedWeightsOnly: an int8 classifier's model holds its
// quantized Linear weights (and the head) only in their packed form — the
// float32 tensors are released, so every other use of them is refused —
// while every lane, a lane built later at another batch size and callers on
// several goroutines get the answers of one image classified alone; fp32
// keeps its float32 weights.
func TestInt8KeepsQuantizedWeightsOnly(t *testing.T) {
	var imgs []image.Image
	for i := 0; i < 12; i++ {
		img := image.NewRGBA(image.Rect(0, 0, 16, 16))
		for p := 0; p < 256; p++ {
			img.Set(p%16, p/16, color.RGBA{uint8(p * (i + 3)), uint8(p * 5), uint8(40 * i), 0xff})
		}
		imgs = append(imgs, img)
	}
	for _, prec := range []graph.Precision{graph.FP32, graph.INT8} {
		t.Run(string(prec), func(t *testing.T) {
			c, _ := smallClassifier(t, Options{PoolSize: 2, MaxBatch: 4, Precision: prec})
			released := 0
			for _, p := range c.model.Params {
				if p.Value == nil {
					released++
				}
			}
			var re *layers.ReleasedError
			err := c.model.CheckFloatWeights()
			if prec.IsInt8() {
				// patch_embed.proj, per block qkv, proj, fc1, fc2, and the head
				if want := 2 + 4*c.model.Config.Depth; released != want || !errors.As(err, &re) {
					t.Errorf("%d float32 weights released (CheckFloatWeights: %v), want %d and a *ReleasedError", released, err, want)
				}
			} else if released != 0 || err != nil {
				t.Errorf("fp32: %d float32 weights released (CheckFloatWeights: %v), want none", released, err)
			}
			want := make([][]Prediction, len(imgs))
			for i, img := range imgs {
				p, err := c.Classify(context.Background(), []image.Image{img})
				if err != nil {
					t.Fatal(err)
				}
				want[i] = p[0]
			}
			bytes := c.WeightBytes()
			l, err := newLane(c.model, 3, graph.NewArena(), prec) // another batch size, after the release
			if err != nil {
				t.Fatal(err)
			}
			l.close()
			if got := c.WeightBytes(); got != bytes {
				t.Errorf("WeightBytes %d after another lane, %d before: the lanes do not share one packed copy", got, bytes)
			}
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			for g := 0; g < 8; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					start, n := g%len(imgs), 1+g%7
					var req []image.Image
					for k := 0; k < n; k++ {
						req = append(req, imgs[(start+k)%len(imgs)])
					}
					got, err := c.Classify(context.Background(), req)
					if err != nil {
						errs <- err
						return
					}
					for k := range got {
						if i := (start + k) % len(imgs); !samePredictions(got[k], want[i]) {
							errs <- fmt.Errorf("caller %d image %d: %v, alone %v", g, i, got[k], want[i])
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
}
