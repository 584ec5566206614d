// Command dp_bench measures data-parallel training on this machine: the
// step time and the share of it spent in the gradient all-reduce, for one
// rank × 2 threads against 2 ranks × 1 thread (mpirun --oversubscribe), and
// prints the ring all-reduce paper model for larger jobs.
//
//	go build -tags mpi -o /tmp/dp_bench ./experiments/dp_bench
//	/tmp/dp_bench [-configs tiny,small,s16] [-steps 8]
//	/tmp/dp_bench -model            # only the paper model
//
// Every run is a child process (this binary with VIT_DP_BENCH_CHILD set),
// started directly for one rank and through mpirun for two. A rank's step is
// train.Step.Take on its share of a fixed random global batch; the
// all-reduce share is the time inside the gradient all-reduce (waiting for
// the slower rank included) over the step time, min–max over ranks. A bare
// all-reduce of the same buffer after a barrier gives the transfer alone.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// childEnv marks a child run; its value is the config name.
const childEnv = "VIT_DP_BENCH_CHILD"

func main() {
	if name, ok := os.LookupEnv(childEnv); ok {
		if err := child(name, os.Args[1:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "dp_bench child:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "dp_bench:", err)
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("dp_bench", flag.ContinueOnError)
	configs := fs.String("configs", "tiny,small", "configs to measure: tiny, small, s16 (ViT-S/16 at 224)")
	steps := fs.Int("steps", 8, "timed steps per run (after 2 untimed ones)")
	modelOnly := fs.Bool("model", false, "print only the paper model of ring all-reduce")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var results []result
	if !*modelOnly {
		self, err := os.Executable()
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "| model | params | global batch | 1 rank × 2 threads | 2 ranks × 1 thread | all-reduce share at 2 ranks | bare all-reduce |\n|---|---|---|---|---|---|---|\n")
		for _, name := range strings.Split(*configs, ",") {
			c, ok := benchConfigs[strings.TrimSpace(name)]
			if !ok {
				return fmt.Errorf("unknown config %q", name)
			}
			one, err := launch(self, c.Name, 1, 2, *steps)
			if err != nil {
				return err
			}
			two, err := launch(self, c.Name, 2, 1, *steps)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "| %s | %d | %d | %.1f ms | %.1f ms | %.1f–%.1f %% | %.2f ms |\n", c.label(), two.Params, c.Batch,
				one.StepMs[0], maxOf(two.StepMs), 100*minOf(two.Share), 100*maxOf(two.Share), two.BareMs)
			two.ComputeMs = one.StepMs[0]
			results = append(results, two)
		}
		fmt.Fprintln(out)
	}
	return paperModel(out, results)
}

// launch runs one measurement: ranks processes of threads threads each.
func launch(self, name string, ranks, threads, steps int) (result, error) {
	args := []string{"-threads", fmt.Sprint(threads), "-steps", fmt.Sprint(steps)}
	var cmd *exec.Cmd
	if ranks == 1 {
		cmd = exec.Command(self, args...)
	} else {
		cmd = exec.Command("mpirun", append([]string{"--oversubscribe", "--bind-to", "none", "-np", fmt.Sprint(ranks), self}, args...)...)
	}
	cmd.Env = append(os.Environ(), childEnv+"="+name)
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return result{}, fmt.Errorf("%s on %d ranks: %w", name, ranks, err)
	}
	var r result
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &r); err != nil {
		return result{}, fmt.Errorf("%s on %d ranks: %w (output %q)", name, ranks, err, stdout.String())
	}
	return r, nil
}

func minOf(x []float64) float64 {
	m := x[0]
	for _, v := range x {
		m = min(m, v)
	}
	return m
}

func maxOf(x []float64) float64 {
	m := x[0]
	for _, v := range x {
		m = max(m, v)
	}
	return m
}

// paperModel prints the predicted scaling efficiency of N nodes, each
// doing the measured one-machine step (weak scaling: the per-node batch
// fixed), with a ring all-reduce moving 2(N−1)/N × 4 bytes × params per
// step at the link's bandwidth and no overlap with the backward pass:
// efficiency = compute / (compute + all-reduce).
func paperModel(out io.Writer, measured []result) error {
	rows := []modelRow{}
	for _, r := range measured {
		rows = append(rows, modelRow{r.Name, r.Params, r.ComputeMs})
	}
	if len(rows) == 0 { // -model alone: the figures measured for the README
		rows = defaultModelRows
	}
	ns := []int{2, 4, 8, 16, 32, 64}
	fmt.Fprintf(out, "| model | step compute | link |")
	for _, n := range ns {
		fmt.Fprintf(out, " N=%d |", n)
	}
	fmt.Fprintf(out, "\n|---|---|---|%s\n", strings.Repeat("---|", len(ns)))
	for _, r := range rows {
		for _, gbps := range []float64{10, 100} {
			fmt.Fprintf(out, "| %s | %.0f ms | %g Gb/s |", r.name, r.computeMs, gbps)
			for _, n := range ns {
				bytes := 2 * float64(n-1) / float64(n) * 4 * float64(r.params)
				arMs := 1e3 * bytes * 8 / (gbps * 1e9)
				fmt.Fprintf(out, " %.1f %% |", 100*r.computeMs/(r.computeMs+arMs))
			}
			fmt.Fprintln(out)
		}
	}
	return nil
}
