package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// header describes the run the tables come from.
type header struct {
	Start           time.Time
	Wall            time.Duration
	Load, LoadAfter string // /proc/loadavg's 1, 5 and 15 minute figures
	CPU, GoVersion  string
	Threads, Rounds int
	Warmup          int
}

// row is one config's measurements: every round, and their medians.
type row struct {
	cfg    benchConfig
	rounds []measured   // ours, one per round
	peers  []peerResult // the peer's, one per round (none without the peer)
	floor  floorResult

	// Set by summarise: medians over the rounds (the largest peak RSS), and
	// each round's ratios ours/peer.
	ours                    stepsResult
	oursRSS                 int64 // KiB
	peer                    *peerResult
	trainRatios, evalRatios []float64
}

// measured is one round of ours.
type measured struct {
	ours stepsResult
	rss  int64 // KiB
}

// summarise fills r's medians and ratios from its rounds.
func (r *row) summarise() {
	if len(r.rounds) == 0 {
		return
	}
	pick := func(f func(m measured) float64) float64 {
		v := make([]float64, len(r.rounds))
		for i, m := range r.rounds {
			v[i] = f(m)
		}
		return median(v)
	}
	r.ours = r.rounds[0].ours
	r.ours.TrainImgS = pick(func(m measured) float64 { return m.ours.TrainImgS })
	r.ours.EvalImgS = pick(func(m measured) float64 { return m.ours.EvalImgS })
	r.ours.StepMs = pick(func(m measured) float64 { return m.ours.StepMs })
	r.ours.EvalMs = pick(func(m measured) float64 { return m.ours.EvalMs })
	for _, m := range r.rounds {
		r.oursRSS = max(r.oursRSS, m.rss)
	}
	if len(r.peers) == 0 {
		return
	}
	p := r.peers[0]
	var tr, ev, ptr, pev []float64
	for i, q := range r.peers {
		ptr, pev = append(ptr, q.TrainImgS), append(pev, q.EvalImgS)
		p.RSS = max(p.RSS, q.RSS)
		if i < len(r.rounds) {
			tr = append(tr, r.rounds[i].ours.TrainImgS/q.TrainImgS)
			ev = append(ev, r.rounds[i].ours.EvalImgS/q.EvalImgS)
		}
	}
	p.TrainImgS, p.EvalImgS = median(ptr), median(pev)
	r.peer, r.trainRatios, r.evalRatios = &p, tr, ev
}

// median of v (the mean of the middle two for an even count); v is sorted
// in place.
func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	sort.Float64s(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// ratios formats a round's ratios: "median (r1, r2, …)".
func ratios(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprintf("%.2f", x)
	}
	sorted := append([]float64(nil), v...)
	return fmt.Sprintf("**%.2f** (%s)", median(sorted), strings.Join(parts, ", "))
}

// gflops is the achieved rate of imgS images/s at mult× forward FLOPs each.
func gflops(imgS, mult float64, bc benchConfig) float64 {
	return imgS * mult * forwardFLOPs(bc.model()) / 1e9
}

// writeTables prints the run as Markdown: the header, the main table, the
// ratios and the BLAS floor by kind.
func writeTables(w io.Writer, h header, rows []row) {
	backend := ""
	if len(rows) > 0 {
		backend = rows[0].ours.Backend
	}
	fmt.Fprintf(w, "Measured %s on %s, %s, SGEMM backend `%s`; GOMAXPROCS = torch threads = %d, batch %s, "+
		"%s timed steps after %d warm-up; load average (1, 5, 15 min) %s before, %s after (this run's own threads included); %.0f s.\n\n",
		h.Start.Format("2006-01-02 15:04"), h.CPU, h.GoVersion, backend, h.Threads, perConfig(rows, func(b benchConfig) int { return b.Batch }),
		perConfig(rows, func(b benchConfig) int { return b.Steps }), h.Warmup, h.Load, h.LoadAfter, h.Wall.Seconds())
	if busy(h.Load) {
		fmt.Fprintf(w, "**The machine was busy (1-minute load ≥ %.1f before the run): other processes shared the cores; compare the ratios, not the absolute numbers.**\n\n", quietLoad)
	}

	fmt.Fprintf(w, "Medians over %d rounds (ours and the peer alternating; peak RSS: the largest).\n\n", h.Rounds)
	fmt.Fprintln(w, "| config | impl | params | train img/s | eval img/s | train GFLOP/s | eval GFLOP/s | step ms | BLAS floor % of step | peak RSS MiB |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		o := r.ours
		fmt.Fprintf(w, "| %s | ours | %d | %.0f | %.0f | %.1f | %.1f | %.1f | %.0f %% | %.0f |\n",
			r.cfg.label(), o.Params, o.TrainImgS, o.EvalImgS, gflops(o.TrainImgS, 3, r.cfg), gflops(o.EvalImgS, 1, r.cfg),
			o.StepMs, 100*r.floor.TrainShare(), mib(r.oursRSS))
		if p := r.peer; p != nil {
			fmt.Fprintf(w, "| %s | PyTorch | %d | %.0f | %.0f | %.1f | %.1f | %.1f | — | %.0f |\n",
				r.cfg.label(), o.Params, p.TrainImgS, p.EvalImgS, gflops(p.TrainImgS, 3, r.cfg), gflops(p.EvalImgS, 1, r.cfg),
				1000*float64(r.cfg.Batch)/p.TrainImgS, mib(p.RSS))
		}
	}

	if hasPeer(rows) {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| config | train img/s ours/peer: median (each round) | eval img/s ours/peer: median (each round) | peak RSS ours/peer | peer |")
		fmt.Fprintln(w, "|---|---:|---:|---:|---|")
		for _, r := range rows {
			if p := r.peer; p != nil {
				fmt.Fprintf(w, "| %s | %s | %s | %.2f | %s, %s |\n", r.cfg.label(),
					ratios(r.trainRatios), ratios(r.evalRatios), float64(r.oursRSS)/float64(p.RSS), p.Torch, p.BLAS)
			}
		}
	}

	fmt.Fprintln(w)
	fmt.Fprintln(w, "BLAS floor of our step: only its SGEMM calls, same shapes and threading, mean ms per step by op; "+
		"each repetition follows a training step and an eval forward, timed in the same process for the shares:")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "| config | %s | train floor / step ms (%%) | eval floor / forward ms (%%) | floor GFLOP/step | floor GFLOP/s | SGEMM calls/step (strided = 1) |\n",
		strings.Join(floorKinds, " | "))
	fmt.Fprintf(w, "|---|%s---:|---:|---:|---:|---:|\n", strings.Repeat("---:|", len(floorKinds)))
	for _, r := range rows {
		f := r.floor
		fmt.Fprintf(w, "| %s |", r.cfg.label())
		for _, k := range floorKinds {
			fmt.Fprintf(w, " %.2f |", f.Ms[k])
		}
		fmt.Fprintf(w, " %.1f / %.1f (%.0f %%) | %.1f / %.1f (%.0f %%) | %.2f | %.1f | %d |\n",
			f.TrainMs(), f.StepMs, 100*f.TrainShare(), f.EvalMs(), f.EvalStepMs, 100*f.EvalShare(),
			f.TrainFLOPs()/1e9, f.TrainFLOPs()/1e9/(f.TrainMs()/1000), f.Calls)
	}
}

// perConfig formats a per-config number: "32" when every row has it,
// "128 (tiny), 32 (s16)" otherwise.
func perConfig(rows []row, f func(benchConfig) int) string {
	var parts []string
	same := true
	for _, r := range rows {
		parts = append(parts, fmt.Sprintf("%d (%s)", f(r.cfg), r.cfg.Name))
		same = same && f(r.cfg) == f(rows[0].cfg)
	}
	if same && len(rows) > 0 {
		return strconv.Itoa(f(rows[0].cfg))
	}
	return strings.Join(parts, ", ")
}

func hasPeer(rows []row) bool {
	for _, r := range rows {
		if r.peer != nil {
			return true
		}
	}
	return false
}

// label is the config's name and shape, e.g. "TINY (d64 L4 h4)", with the
// input and batch where they are not MNIST's 28×28 at 128: "S16 (d384 L12 h6,
// 3×224², batch 32)".
func (b benchConfig) label() string {
	if b.Img == 28 && b.Chans == 1 && b.Batch == 128 {
		return fmt.Sprintf("%s (d%d L%d h%d)", strings.ToUpper(b.Name), b.Dim, b.Depth, b.Heads)
	}
	return fmt.Sprintf("%s (d%d L%d h%d, %d×%d², batch %d)", strings.ToUpper(b.Name), b.Dim, b.Depth, b.Heads, b.Chans, b.Img, b.Batch)
}

// quietLoad is the 1-minute load average below which the machine counts as
// quiet enough to measure.
const quietLoad = 1.5

// busy says whether a loadAverage reading is at or above quietLoad.
func busy(load string) bool {
	f := strings.Fields(load)
	if len(f) == 0 {
		return false
	}
	v, err := strconv.ParseFloat(f[0], 64)
	return err == nil && v >= quietLoad
}

// loadAverage is /proc/loadavg's first three fields ("?" off Linux).
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// cpuModel is /proc/cpuinfo's first model name ("unknown CPU" off Linux).
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}
