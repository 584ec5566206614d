// Command pos_similarity draws the cosine similarity between the learned
// patch position embeddings of a ViT trained on MNIST (pos_embed rows
// 1…N; the class token's row 0 is left out), laid out as in the ViT paper's
// Fig. 7 (center): one small heat map per patch position, arranged on the
// 7×7 patch grid. It also measures whether same-row and same-column
// positions end up more alike than others, trained against at init.
//
//	go run ./experiments/pos_similarity [-epochs 6] [-limit-train 0] [-seed 0] [-set key=value]…
//	go run ./experiments/pos_similarity -checkpoint runs/…/last.safetensors
//
// Without -checkpoint it trains the default recipe into -out
// (runs/experiments/pos_similarity) and reads its last.safetensors.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/experiments/internal/budget"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/train"
)

// source says where the trained model came from, for the README.
type source struct {
	Checkpoint string // the model file read
	Trained    string // how it was trained ("" when given with -checkpoint)
	Top1       float64
	Step       int
}

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "pos_similarity: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("pos_similarity", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "configs/mnist_vit_tiny.yaml", "recipe to train (YAML)")
	ckpt := fs.String("checkpoint", "", "use this trained model file instead of training one")
	out := fs.String("out", "runs/experiments/pos_similarity", "directory for the training run")
	dir := fs.String("dir", "experiments/pos_similarity", "where README.md and the PNGs are written")
	noReadme := fs.Bool("no-readme", false, "print the table but do not rewrite README.md")
	var bud budget.Budget
	bud.Flags(fs, budget.Budget{LimitTrain: 0, LimitVal: 0, Epochs: 6}, "the run")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return fmt.Errorf("-dir: %w", err)
	}
	start := time.Now()
	log := logrus.New()
	log.SetOutput(stderr)

	src := source{Checkpoint: *ckpt}
	if *ckpt == "" {
		overrides := bud.Overrides(*out)
		cfg, err := train.LoadConfig(*cfgPath, overrides)
		if err != nil {
			return err
		}
		log.Infof("training into %s", *out)
		res, err := train.Run(context.Background(), cfg, train.Options{Log: log})
		if err != nil {
			return err
		}
		src.Checkpoint = filepath.Join(*out, train.LastModel)
		src.Trained = fmt.Sprintf("%s with %s", *cfgPath, strings.Join(overrides, " "))
		src.Top1 = res.Last.Top1
	}
	trained, meta, _, err := train.LoadModel(src.Checkpoint, tensor.Float32, nil, "")
	if err != nil {
		return err
	}
	src.Step = meta.Step
	// The same architecture and seed before any update: what training
	// started from (train.Run initialises with layers.New(cfg.Model, …, train.seed)).
	initM, err := layers.New(meta.Model, tensor.Float32, bud.Seed)
	if err != nil {
		return err
	}
	simT, err := similarity(trained)
	if err != nil {
		return fmt.Errorf("%s: %w", src.Checkpoint, err)
	}
	simI, err := similarity(initM)
	if err != nil {
		return err
	}
	stT, stI := simT.stats(), simI.stats()
	inT, inI := simT.interior(), simI.interior()
	gh, gw := meta.Model.Grid()
	table := formatTable([]string{
		fmt.Sprintf("trained, all %d×%d", gh, gw), fmt.Sprintf("trained, interior %d×%d", gh-2, gw-2),
		fmt.Sprintf("init, all %d×%d", gh, gw), fmt.Sprintf("init, interior %d×%d", gh-2, gw-2),
	}, []stripeStats{stT, inT, stI, inI})
	fmt.Fprint(stdout, table)

	figT, figI := filepath.Join(*dir, "pos_similarity.png"), filepath.Join(*dir, "pos_similarity_init.png")
	if err := plotGrid(simT, fmt.Sprintf("Position embedding similarity, trained (%d×%d patches, step %d)", gh, gw, meta.Step), figT); err != nil {
		return err
	}
	if err := plotGrid(simI, fmt.Sprintf("Position embedding similarity at init (seed %d)", bud.Seed), figI); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s, %s\n", figT, figI)
	if *noReadme {
		return nil
	}
	cmd := "go run ./experiments/pos_similarity"
	if len(args) > 0 {
		cmd += " " + strings.Join(args, " ")
	}
	readme := filepath.Join(*dir, "README.md")
	if err := writeReadme(readme, cmd, time.Since(start), table, src, [4]stripeStats{stT, inT, stI, inI}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s\n", readme)
	return nil
}

// formatTable renders the statistics as rows, one column per model and
// position set.
func formatTable(names []string, st []stripeStats) string {
	var b strings.Builder
	b.WriteString("| mean cosine similarity of pairs |")
	for _, n := range names {
		b.WriteString(" " + n + " |")
	}
	b.WriteString("\n|---|" + strings.Repeat("---:|", len(names)) + "\n")
	line := func(label, format string, get func(stripeStats) float64) {
		b.WriteString("| " + label + " |")
		for _, s := range st {
			b.WriteString(" " + fmt.Sprintf(format, get(s)) + " |")
		}
		b.WriteString("\n")
	}
	line("neighbours (d = 1)", "%.3f", func(s stripeStats) float64 { return s.Neighbour })
	line("same row (d ≥ 2)", "%.3f", func(s stripeStats) float64 { return s.SameRow })
	line("same column (d ≥ 2)", "%.3f", func(s stripeStats) float64 { return s.SameCol })
	line("other pairs (d ≥ 2)", "%.3f", func(s stripeStats) float64 { return s.OffLine })
	line("stripe score: same row/column − other", "%+.3f", func(s stripeStats) float64 { return s.Stripe() })
	line("**distance-matched stripe score**", "**%+.3f**", func(s stripeStats) float64 { return s.Matched })
	line("distance-matched, rows only", "%+.3f", func(s stripeStats) float64 { return s.MatchedRow })
	line("distance-matched, columns only", "%+.3f", func(s stripeStats) float64 { return s.MatchedCol })
	return b.String()
}
