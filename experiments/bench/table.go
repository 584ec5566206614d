package main

import (
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/vitgo/vit/experiments/internal/harness"
)

// header describes the run the tables come from.
type header struct {
	// The CPU and what our kernels used on it (its fields are results.json's
	// "CPU", "Backend", …).
	harness.Machine
	Start           time.Time
	Wall            time.Duration
	Load, LoadAfter string // /proc/loadavg's 1, 5 and 15 minute figures
	GoVersion       string
	Threads, Batch  int // Batch: every config's, or 0 when they differ (each row's label names its own)
	Steps, Rounds   int // Steps: likewise
	Warmup          int // untimed steps before the timed ones
}

// row is one config's measurements: every round, and their medians.
type row struct {
	Cfg    benchConfig
	rounds []measured   // ours, one per round
	peers  []peerResult // the peer's, one per round (none without the peer)
	Floor  floorResult

	// Set by summarise: medians over the rounds (the largest peak RSS), and
	// each round's ratios ours/peer.
	Ours                    stepsResult
	OursRSS                 int64 // KiB
	Peer                    *peerResult
	TrainRatios, EvalRatios []float64
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
	r.Ours = r.rounds[0].ours
	r.Ours.TrainImgS = pick(func(m measured) float64 { return m.ours.TrainImgS })
	r.Ours.EvalImgS = pick(func(m measured) float64 { return m.ours.EvalImgS })
	r.Ours.StepMs = pick(func(m measured) float64 { return m.ours.StepMs })
	r.Ours.EvalMs = pick(func(m measured) float64 { return m.ours.EvalMs })
	for _, m := range r.rounds {
		r.OursRSS = max(r.OursRSS, m.rss)
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
	r.Peer, r.TrainRatios, r.EvalRatios = &p, tr, ev
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

// Ratios formats a round's ratios: "median (r1, r2, …)".
func (r row) Ratios(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprintf("%.2f", x)
	}
	sorted := append([]float64(nil), v...)
	return fmt.Sprintf("**%.2f** (%s)", median(sorted), strings.Join(parts, ", "))
}

// The tables' cells (readme.md.tmpl).

// Label is the config's label.
func (r row) Label() string { return r.Cfg.label() }

// GF is the rate of imgS images/s at mult× forward FLOPs, in GFLOP/s.
func (r row) GF(imgS, mult float64) float64 { return gflops(imgS, mult, r.Cfg) }

// MiB is a peak RSS in MiB.
func (r row) MiB(kib int64) float64 { return mib(kib) }

// PeerStepMs is the peer's training step time.
func (r row) PeerStepMs() float64 { return 1000 * float64(r.Cfg.Batch) / r.Peer.TrainImgS }

// RSSRatio is the peak RSS ours/peer.
func (r row) RSSRatio() float64 { return float64(r.OursRSS) / float64(r.Peer.RSS) }

// gflops is the achieved rate of imgS images/s at mult× forward FLOPs each.
func gflops(imgS, mult float64, bc benchConfig) float64 {
	return imgS * mult * forwardFLOPs(bc.model()) / 1e9
}

// results are one run of the benchmark: what the README's latest table
// shows.
type results struct {
	Header header
	Rows   []row
}

// Busy says whether the machine was busy before the run.
func (r results) Busy() bool { return busy(r.Header.Load) }

// Peered says whether the peer ran (the ratio table is shown).
func (r results) Peered() bool { return len(r.Rows) > 0 && r.Rows[0].Peer != nil }

// PeerFallback says whether the peer ran a generic BLAS kernel family in
// any row (peerResult.Fallback): the tables mark those rows and say why.
func (r results) PeerFallback() bool {
	for _, row := range r.Rows {
		if row.Peer != nil && row.Peer.Fallback() {
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
