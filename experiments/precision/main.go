// Command precision compares a checkpoint's evaluation with bfloat16
// products (train.precision bf16, cmd/eval -precision bf16) against float32
// on its data set's validation split: the top-1 of each, the share of
// images whose top-1 agree, and the largest |Δlogit| over every image and
// class. It adds (or replaces) the checkpoint's row in results.json's
// agreement table, beside the record's other entries, and renders
// README.md from results.json (readme.md.tmpl):
//
//	go run ./experiments/precision -checkpoint runs/mnist_vit_tiny/best.safetensors
//	go run ./experiments/precision -render    # the README alone
//
// The other entries (accuracy pairs, speed, memory) are measured by the
// commands each names and kept in results.json by hand, each with the CPU
// it ran on by model and instruction set; git keeps their history.
package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"

	"github.com/vitgo/vit/evaluate"
	"github.com/vitgo/vit/experiments/internal/harness"
	"github.com/vitgo/vit/graph"
)

//go:embed readme.md.tmpl
var readme string

var flags struct{ checkpoint string }

var experiment = harness.Experiment[results]{
	Name:   "precision",
	Readme: readme,
	Flags: func(fs *flag.FlagSet) {
		fs.StringVar(&flags.checkpoint, "checkpoint", "", "a model .safetensors of ours (required unless -render)")
	},
	Measure: func(e *harness.Env) (results, error) { return measure(e.Dir, flags.checkpoint) },
}

func main() { harness.Main(experiment) }

// results is the record: the CPUs, the entries kept by hand and the
// agreement rows this command measures.
type results struct {
	// Machines are the CPUs the entries ran on.
	Machines []machine
	// Entries are the measurements, each with its commands and CPU.
	Entries []entry
	// Agreement holds one row per checkpoint this command evaluated.
	Agreement []agreement
}

// machine is one CPU of the record.
type machine struct {
	CPU    string // model and instruction set: "AMD EPYC Zen 5 (AVX-512, AVX512_BF16, no AMX)"
	Detail string // what else was recorded of it
}

// entry is one measurement of the record.
type entry struct {
	Title    string
	CPU      string   // the CPU it ran on, as a machine's CPU names it
	Commands []string // what measured it, from the repository root
	Text     []string // what it found, before the tables: paragraphs or "- " items
	Tables   []table
	After    []string `json:",omitempty"` // paragraphs after the tables
}

// table is one Markdown table: its header, its alignment row's cells
// ("---" or "---:") and its rows.
type table struct {
	Head, Align []string
	Rows        [][]string
}

// agreement is one checkpoint evaluated in both precisions.
type agreement struct {
	Checkpoint   string
	CPU          string // harness.DescribeMachine, or a machine's CPU
	Images       int
	Top1FP32     float64
	Top1BF16     float64
	Agree        int // images whose top-1 is the same in both
	MaxAbsLogits float64
}

// measure evaluates ckpt in both precisions and returns dir's committed
// record with ckpt's agreement row added or replaced.
func measure(dir, ckpt string) (results, error) {
	if ckpt == "" {
		return results{}, errors.New("-checkpoint is required (or -render)")
	}
	var rep harness.Report[results]
	if err := harness.ReadResults(dir, &rep); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return results{}, err
	}
	row, err := compare(ckpt)
	if err != nil {
		return results{}, err
	}
	r := rep.R
	for i := range r.Agreement {
		if r.Agreement[i].Checkpoint == row.Checkpoint {
			r.Agreement[i] = row
			return r, nil
		}
	}
	r.Agreement = append(r.Agreement, row)
	return r, nil
}

// compare evaluates ckpt with float32 and with bf16 products, image by
// image.
func compare(ckpt string) (agreement, error) {
	logits := map[graph.Precision]map[int][]float32{}
	res := map[graph.Precision]evaluate.Result{}
	for _, p := range []graph.Precision{graph.FP32, graph.BF16} {
		byIndex := map[int][]float32{}
		r, _, _, err := evaluate.Checkpoint(context.Background(), evaluate.Options{
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
			return agreement{}, fmt.Errorf("%s: %w", p, err)
		}
		logits[p], res[p] = byIndex, r
	}
	a := agreement{Checkpoint: filepath.ToSlash(ckpt), CPU: harness.DescribeMachine().String(),
		Top1FP32: res[graph.FP32].Top1, Top1BF16: res[graph.BF16].Top1}
	for j, x := range logits[graph.FP32] {
		y, ok := logits[graph.BF16][j]
		if !ok || len(y) != len(x) {
			return agreement{}, fmt.Errorf("%s: image %d: no bf16 logits", ckpt, j)
		}
		a.Images++
		if harness.Argmax(x) == harness.Argmax(y) {
			a.Agree++
		}
		for c := range x {
			a.MaxAbsLogits = max(a.MaxAbsLogits, math.Abs(float64(x[c])-float64(y[c])))
		}
	}
	return a, nil
}

// AgreePct is the share of images whose top-1 agree, as the table prints it.
func (a agreement) AgreePct() string {
	if a.Images == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f%%", 100*float64(a.Agree)/float64(a.Images))
}
