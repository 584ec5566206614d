// Command precision compares a checkpoint's evaluation with bfloat16
// products (train.precision bf16, cmd/eval -precision bf16) against float32
// on its data set's validation split: the top-1 of each, the share of
// images whose top-1 agree, and the largest |Δlogit| over every image and
// class. The results of the runs recorded in README.md came from it:
//
//	go run ./experiments/precision -checkpoint runs/mnist_vit_tiny/best.safetensors
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math"
	"os"

	"github.com/vitgo/vit/evaluate"
	"github.com/vitgo/vit/experiments/internal/harness"
	"github.com/vitgo/vit/graph"
)

func main() {
	ckpt := flag.String("checkpoint", "", "a model .safetensors of ours (required)")
	flag.Parse()
	if *ckpt == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: precision -checkpoint FILE")
		os.Exit(2)
	}
	if err := run(*ckpt); err != nil {
		log.Fatal(err)
	}
}

func run(ckpt string) error {
	logits := map[graph.Precision]map[int][]float32{}
	results := map[graph.Precision]evaluate.Result{}
	for _, p := range []graph.Precision{graph.FP32, graph.BF16} {
		byIndex := map[int][]float32{}
		res, _, _, err := evaluate.Checkpoint(context.Background(), evaluate.Options{
			Checkpoint: ckpt, Precision: p,
			OnBatch: func(idx, _ []int, lg []float32) error {
				k := len(lg) / len(idx)
				for i, j := range idx {
					byIndex[j] = append([]float32(nil), lg[i*k:(i+1)*k]...)
				}
				return nil
			},
		})
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		logits[p], results[p] = byIndex, res
	}
	var agree, n int
	var maxDiff float64
	for j, a := range logits[graph.FP32] {
		b, ok := logits[graph.BF16][j]
		if !ok || len(b) != len(a) {
			return fmt.Errorf("image %d: no bf16 logits", j)
		}
		n++
		if harness.Argmax(a) == harness.Argmax(b) {
			agree++
		}
		for c := range a {
			maxDiff = max(maxDiff, math.Abs(float64(a[c])-float64(b[c])))
		}
	}
	fmt.Printf("| checkpoint | images | top-1 fp32 | top-1 bf16 | top-1 agreement | max abs Δlogit |\n|---|---:|---:|---:|---:|---:|\n")
	fmt.Printf("| %s | %d | %.2f%% | %.2f%% | %.2f%% (%d of %d) | %.3g |\n", ckpt, n, 100*results[graph.FP32].Top1, 100*results[graph.BF16].Top1, 100*float64(agree)/float64(n), agree, n, maxDiff)
	return nil
}
