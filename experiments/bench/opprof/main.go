// Command opprof times each op of our serving graph (the Frozen graph a
// classify lane runs, evaluate.NewFrozenIn) at one batch size and prints a
// per-op-kind table, the counterpart of ONNX Runtime's profiler output
// (experiments/bench/ort/ort_profile.js). The record is
// experiments/bench/serving/PROFILE.md.
//
//	go run ./experiments/bench/opprof -model vit_tiny_patch16_224 -threads 2
//	go run ./experiments/bench/opprof -model vit_small_patch16_224 -precision int8
//	go run ./experiments/bench/opprof -threads 1 -ops=false -cpuprofile /tmp/ti.prof
//
// Each round runs the graph twice: once through the tape machine (Logits,
// what serving times), and once op by op in the tape's order, calling each
// op's Do on its inputs' values and timing it alone; the per-op times of a
// kind are summed per round and the table shows their medians over the
// rounds. Every op is timed at -threads cores and again at one core
// (GOMAXPROCS 1, the same chunks run in order): the difference between the
// time at n cores and the one-core time / n is what the split over the
// cores loses (thread hand-offs, waiting for the last chunk, imbalance,
// shared caches). The tape's own cost is the Logits time less the sum of
// the ops.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"sort"
	"strings"
	"time"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/evaluate"
	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/internal/regfile"
	"github.com/vitgo/vit/layers"
)

func main() {
	model := flag.String("model", "vit_tiny_patch16_224", "layers preset")
	prec := flag.String("precision", "fp32", "fp32 or int8")
	threads := flag.Int("threads", 2, "cores (GOMAXPROCS)")
	batch := flag.Int("batch", 1, "images per run")
	rounds := flag.Int("rounds", 30, "timed rounds")
	warmup := flag.Int("warmup", 5, "untimed rounds")
	oneCore := flag.Bool("one-core", true, "also time every op at one core")
	ops := flag.Bool("ops", true, "time the ops (false: only the graph run, printed as one line)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole command to this file")
	flag.Parse()
	if *cpuProfile != "" {
		f, _, err := regfile.OpenFile(*cpuProfile, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644) // refuses a FIFO there
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "opprof: -cpuprofile:", err)
			os.Exit(1)
		}
		defer f.Close()
		defer pprof.StopCPUProfile()
	}
	if err := run(*model, graph.Precision(*prec), *threads, *batch, *rounds, *warmup, *oneCore, *ops); err != nil {
		fmt.Fprintln(os.Stderr, "opprof:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

// step is one op node of the tape with its inputs.
type step struct {
	n    *G.Node
	in   []*G.Node
	kind string
}

func run(preset string, prec graph.Precision, threads, batch, rounds, warmup int, oneCore, ops bool) error {
	if err := prec.Validate(); err != nil {
		return fmt.Errorf("-precision: %w", err)
	}
	c, ok := layers.Presets[preset]
	if !ok {
		return fmt.Errorf("-model: unknown preset %q", preset)
	}
	m, err := layers.New(c, tensor.Float32, 0)
	if err != nil {
		return err
	}
	ev, err := evaluate.NewFrozenIn(m, batch, graph.NewArena(), evaluate.WithPrecision(prec))
	if err != nil {
		return err
	}
	defer ev.Close()
	x := make([]float32, batch*c.InChans*c.ImgSize[0]*c.ImgSize[1])
	rng := rand.New(rand.NewPCG(0, 11))
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	if _, err := ev.Logits(x, batch); err != nil {
		return err
	}
	steps, err := tape(ev.Graph().G)
	if err != nil {
		return err
	}
	if !ops {
		runtime.GOMAXPROCS(threads)
		var t []float64
		for r := -warmup; r < rounds; r++ {
			t0 := time.Now()
			if _, err := ev.Logits(x, batch); err != nil {
				return err
			}
			if r >= 0 {
				t = append(t, ms(time.Since(t0)))
			}
		}
		fmt.Printf("%s %s batch %d, %d cores: graph run median %.3f ms, min %.3f ms\n", preset, prec, batch, threads, median(t), slices.Min(t))
		return nil
	}
	kinds := map[string][][]float64{} // kind → [cores index][round] ms
	var total, opsSum [2][]float64
	for ci, cores := range []int{threads, 1} {
		if ci == 1 && !oneCore {
			break
		}
		runtime.GOMAXPROCS(cores)
		for r := -warmup; r < rounds; r++ {
			t0 := time.Now()
			if _, err := ev.Logits(x, batch); err != nil {
				return err
			}
			tl := ms(time.Since(t0))
			per, err := replay(steps)
			if err != nil {
				return err
			}
			if r < 0 {
				continue
			}
			total[ci] = append(total[ci], tl)
			var s float64
			for k, v := range per {
				if kinds[k] == nil {
					kinds[k] = make([][]float64, 2)
				}
				kinds[k][ci] = append(kinds[k][ci], v)
				s += v
			}
			opsSum[ci] = append(opsSum[ci], s)
		}
	}
	print(preset, prec, threads, batch, rounds, steps, kinds, total, opsSum)
	return nil
}

// tape returns g's op nodes in the order the tape machine runs them.
func tape(g *G.ExprGraph) ([]step, error) {
	order, err := G.Sort(g)
	if err != nil {
		return nil, err
	}
	slices.Reverse(order)
	var s []step
	for _, n := range order {
		if n.Op() == nil {
			continue
		}
		var in []*G.Node
		for it := g.From(n.ID()); it.Next(); { // children: the op's inputs in order
			in = append(in, it.Node().(*G.Node))
		}
		s = append(s, step{n: n, in: in, kind: kindOf(n, in)})
	}
	return s, nil
}

// kindOf names an op node by its op and shapes: products by (M×K → N).
func kindOf(n *G.Node, in []*G.Node) string {
	name := n.Op().String()
	switch {
	case strings.HasPrefix(name, "LinearPacked"):
		x := in[0].Shape()
		return fmt.Sprintf("%s %d×%d→%d", name, x[0], x[1], n.Shape()[1])
	case strings.HasPrefix(name, "AttentionEval"):
		return fmt.Sprintf("%s %v→%v", name, in[0].Shape(), n.Shape())
	}
	if i := strings.IndexAny(name, "(["); i > 0 {
		name = name[:i]
	}
	return fmt.Sprintf("%s %v", name, n.Shape())
}

// replay runs the steps' Do in order on their inputs' current values and
// returns the time of each kind in milliseconds.
func replay(steps []step) (map[string]float64, error) {
	vals := map[*G.Node]G.Value{}
	per := map[string]float64{}
	for _, s := range steps {
		in := make([]G.Value, len(s.in))
		for i, c := range s.in {
			if v, ok := vals[c]; ok {
				in[i] = v
			} else {
				in[i] = c.Value()
			}
		}
		t0 := time.Now()
		v, err := s.n.Op().Do(in...)
		per[s.kind] += ms(time.Since(t0))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.kind, err)
		}
		vals[s.n] = v
	}
	return per, nil
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	sort.Float64s(s)
	return s[len(s)/2]
}

func print(preset string, prec graph.Precision, threads, batch, rounds int, steps []step, kinds map[string][][]float64, total, opsSum [2][]float64) {
	count := map[string]int{}
	for _, s := range steps {
		count[s.kind]++
	}
	keys := make([]string, 0, len(kinds))
	for k := range kinds {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return median(kinds[keys[i]][0]) > median(kinds[keys[j]][0]) })
	tn := median(total[0])
	fmt.Printf("%s %s batch %d, %d cores (GOMAXPROCS), %d rounds, medians; %s\n\n", preset, prec, batch, threads, rounds, runtime.GOARCH)
	fmt.Printf("| op kind (M×K→N) | count | ms at %d cores | share | ms at 1 core | lost to the split (ms at %d − 1-core/%d) |\n|---|---:|---:|---:|---:|---:|\n", threads, threads, threads)
	var lost float64
	for _, k := range keys {
		a, b := median(kinds[k][0]), median(kinds[k][1])
		l := a - b/float64(threads)
		lost += l
		fmt.Printf("| %s | %d | %.3f | %.1f %% | %.3f | %.3f |\n", k, count[k], a, 100*a/tn, b, l)
	}
	sn, s1 := median(opsSum[0]), median(opsSum[1])
	fmt.Printf("| **sum of ops** | %d | %.3f | %.1f %% | %.3f | %.3f |\n", len(steps), sn, 100*sn/tn, s1, lost)
	fmt.Printf("| **graph run (Logits)** | | %.3f | 100 %% | %.3f | |\n", tn, median(total[1]))
	fmt.Printf("| tape and Logits overhead (run − sum of ops) | | %.3f | %.1f %% | %.3f | |\n", tn-sn, 100*(tn-sn)/tn, median(total[1])-s1)
}
