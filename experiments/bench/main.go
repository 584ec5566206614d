// Command bench measures our ViT's training and evaluation throughput against
// the PyTorch peer (shared/bench/vit_ref.py) on the same configs, threads and
// batch, and prints one Markdown table: images/s, GFLOP/s (forward matmul
// FLOPs ×3 for a training step, vit_ref.py's convention), the BLAS floor (the
// time of only the step's own SGEMM calls, with its exact shapes) as a share
// of the step, peak RSS, and the ratios ours/peer.
//
//	go run ./experiments/bench [-steps 30] [-configs tiny,small] [-peer=true] [-threads 2]
//	go run ./experiments/bench -configs s16 -rounds 1          # one ImageNet shape at a time
//	go run ./experiments/bench -configs tiny,small,s16 -scaling 1,2 -peer=false   # per-op scaling
//	go run -tags openblas ./experiments/bench          # SGEMM through cblas_sgemm
//	go run ./experiments/bench -configs tiny -peer=false -cpuprofile /tmp/tiny.prof
//
// Every measurement runs in a child process (this binary re-executed with
// VIT_BENCH_CHILD set), so that its peak RSS is its own: the parent reads the
// child's rusage. The BLAS floor runs in a second child that alternates a
// real step, an eval forward and the floor's products, so that its share of
// the step compares times taken under the same load (this machine is
// shared). Inputs are random MNIST-shaped images (normalised with MNIST's
// mean and std) and random one-hot targets.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"
)

// opts are the command's flags.
type opts struct {
	steps      int // 0: each config's own
	rounds     int
	configs    []benchConfig
	peer       bool
	threads    int
	batch      int // 0: each config's own
	seed       uint64
	scaling    []int // threads of the per-op sweep; none: the main bench
	warmup     int
	python     string
	peerScript string
	cpuProfile string
}

func main() {
	if spec, ok := os.LookupEnv(childEnv); ok {
		if err := childMain(spec, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "bench child:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string, stderr io.Writer) (opts, error) {
	var o opts
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&o.steps, "steps", 0, "timed training steps and eval forwards per config, after 3 warm-up ones (0: the config's own, 30 for tiny and small, 5 for s16, 3 for b16, 2 for b16-384)")
	fs.IntVar(&o.rounds, "rounds", 3, "measurements of ours and the peer per config, alternating (ours first in odd rounds, the peer first in even ones); the tables give medians")
	configs := fs.String("configs", "tiny,small", "comma-separated configs: "+strings.Join(configNames(), ", "))
	fs.BoolVar(&o.peer, "peer", true, "also run the PyTorch peer (shared/bench/vit_ref.py)")
	fs.IntVar(&o.threads, "threads", 2, "GOMAXPROCS for ours, --threads for the peer")
	fs.IntVar(&o.batch, "batch", 0, "batch size of the training and eval steps (0: the config's own, 128 for tiny and small, 32 for s16, 16 for b16 and b16-384)")
	fs.IntVar(&o.warmup, "warmup", 3, "untimed training steps (and eval forwards) before the timed ones; the peer always runs 3")
	scaling := fs.String("scaling", "", "comma-separated thread counts, e.g. 1,2: instead of the main bench, time each op kind, AdamW, clipping, the finite checks and the rest of the step at each count (see SCALING.md)")
	fs.Uint64Var(&o.seed, "seed", 0, "seeds the weights and the random batch")
	fs.StringVar(&o.python, "python", "/usr/bin/python3", "the interpreter that sees Debian's python3-torch")
	fs.StringVar(&o.peerScript, "peer-script", "", "path of vit_ref.py (default: ../shared/bench/vit_ref.py from the repository root)")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of our timed training steps to this file (one config: as is; several: NAME.CONFIG.EXT)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.steps < 0 {
		return o, fmt.Errorf("-steps: must be positive (or 0 for each config's own), got %d", o.steps)
	}
	if o.rounds <= 0 {
		return o, fmt.Errorf("-rounds: must be positive, got %d", o.rounds)
	}
	if o.threads <= 0 {
		return o, fmt.Errorf("-threads: must be positive, got %d", o.threads)
	}
	if o.warmup < 1 {
		return o, fmt.Errorf("-warmup: must be at least 1 (the first step allocates), got %d", o.warmup)
	}
	if o.batch < 0 {
		return o, fmt.Errorf("-batch: must be positive (or 0 for each config's own), got %d", o.batch)
	}
	var err error
	if o.configs, err = parseConfigs(*configs); err != nil {
		return o, fmt.Errorf("-configs: %w", err)
	}
	for i := range o.configs {
		o.configs[i] = o.configs[i].withRun(o.batch, o.steps)
	}
	if o.scaling, err = parseThreads(*scaling); err != nil {
		return o, fmt.Errorf("-scaling: %w", err)
	}
	return o, nil
}

func run(args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if len(o.scaling) > 0 {
		return runScaling(o, stdout, stderr)
	}
	if o.peer && o.peerScript == "" {
		if o.peerScript, err = defaultPeerScript(); err != nil {
			return err
		}
	}
	start := time.Now()
	h := header{Load: loadAverage(), Threads: o.threads,
		GoVersion: runtime.Version(), CPU: cpuModel(), Start: start, Rounds: o.rounds, Warmup: o.warmup}
	fmt.Fprintf(stderr, "bench: load %s, %d threads\n", h.Load, o.threads)
	if busy(h.Load) {
		fmt.Fprintf(stderr, "bench: warning: 1-minute load %s ≥ %.1f: other processes share the cores, the numbers will be noisy\n",
			strings.Fields(h.Load)[0], quietLoad)
	}
	var rows []row
	for _, bc := range o.configs {
		r := row{cfg: bc}
		j := job{Mode: modeSteps, Config: bc.Name, Steps: bc.Steps, Threads: o.threads, Batch: bc.Batch, Seed: o.seed, Warmup: o.warmup}
		ours := func(round int) error {
			var m measured
			j.CPUProfile = ""
			if round == 0 {
				j.CPUProfile = profilePath(o.cpuProfile, bc.Name, len(o.configs))
			}
			if err := runChild(j, &m.ours, &m.rss); err != nil {
				return fmt.Errorf("%s: ours: %w", bc.Name, err)
			}
			r.rounds = append(r.rounds, m)
			fmt.Fprintf(stderr, "bench: %s round %d ours (%s): train %.0f img/s, eval %.0f img/s, %.0f MiB (%.0fs)\n",
				bc.Name, round+1, m.ours.Backend, m.ours.TrainImgS, m.ours.EvalImgS, mib(m.rss), time.Since(start).Seconds())
			return nil
		}
		peer := func(round int) error {
			p, err := runPeer(o.python, o.peerScript, bc, bc.Batch, o.threads, bc.Steps)
			if err != nil {
				return fmt.Errorf("%s: peer: %w", bc.Name, err)
			}
			r.peers = append(r.peers, p)
			fmt.Fprintf(stderr, "bench: %s round %d peer: train %.0f img/s, eval %.0f img/s, %.0f MiB (%.0fs)\n",
				bc.Name, round+1, p.TrainImgS, p.EvalImgS, mib(p.RSS), time.Since(start).Seconds())
			return nil
		}
		for round := range o.rounds {
			peerFirst := o.peer && round%2 == 1
			if peerFirst {
				if err := peer(round); err != nil {
					return err
				}
			}
			if err := ours(round); err != nil {
				return err
			}
			if o.peer && !peerFirst {
				if err := peer(round); err != nil {
					return err
				}
			}
		}
		j.Mode, j.CPUProfile = modeFloor, ""
		if err := runChild(j, &r.floor, nil); err != nil {
			return fmt.Errorf("%s: BLAS floor: %w", bc.Name, err)
		}
		fmt.Fprintf(stderr, "bench: %s BLAS floor: train %.1f of %.1f ms, eval %.1f of %.1f ms (%.0fs)\n",
			bc.Name, r.floor.TrainMs(), r.floor.StepMs, r.floor.EvalMs(), r.floor.EvalStepMs, time.Since(start).Seconds())
		r.summarise()
		rows = append(rows, r)
	}
	h.LoadAfter = loadAverage()
	h.Wall = time.Since(start)
	writeTables(stdout, h, rows)
	return nil
}

// profilePath names config's profile file: path itself for a single
// config, else path with the config inserted before the extension.
func profilePath(path, config string, nconfigs int) string {
	if path == "" || nconfigs == 1 {
		return path
	}
	dot := strings.LastIndexByte(path, '.')
	if dot <= strings.LastIndexByte(path, '/') {
		return path + "." + config
	}
	return path[:dot] + "." + config + path[dot:]
}
