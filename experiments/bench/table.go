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
	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/layers"
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
	// Precisions are ours (-precision), in the order run; empty in results
	// recorded before the flag: fp32.
	Precisions []graph.Precision `json:",omitempty"`
	// BF16Backend is kernels.BF16Backend() when ours ran bf16: the AMX
	// tiles or the emulation; empty in results recorded before it.
	BF16Backend string `json:",omitempty"`
	// Recompute is what ours's bf16 training steps recomputed (-recompute);
	// empty for none.
	Recompute layers.Recompute `json:",omitempty"`
	// BF16Peak is kernels.BF16Peak(Threads) in GFLOP/s, measured before
	// the rounds when ours ran bf16 on a backend that has a peak loop
	// (VDPBF16PS); 0 otherwise, and in results recorded before it.
	BF16Peak float64 `json:",omitempty"`
}

// PrecisionsText names ours's precisions, "fp32" when none was recorded.
func (h header) PrecisionsText() string {
	if len(h.Precisions) == 0 {
		return string(graph.FP32)
	}
	s := make([]string, len(h.Precisions))
	for i, p := range h.Precisions {
		s[i] = string(p)
	}
	out := strings.Join(s, ", ")
	if h.BF16Backend != "" {
		out += "; our bf16 products on " + h.BF16Backend
	}
	if h.Recompute != "" {
		out += "; our bf16 training steps recompute " + string(h.Recompute) + " (train.recompute)"
	}
	return out
}

// row is one config's measurements of ours in one precision: every round,
// and their medians, beside the peer's (float32, and torch.autocast
// bfloat16 when ours ran bf16), which the config's rows share.
type row struct {
	Cfg benchConfig
	// Prec is ours's precision; "" in results recorded before -precision:
	// fp32.
	Prec graph.Precision `json:",omitempty"`
	// FirstOfConfig marks the config's first row: the tables show the
	// peer's lines there only. Results recorded before -precision have one
	// row per config and leave it false (see ShowPeer).
	FirstOfConfig bool         `json:",omitempty"`
	rounds        []measured   // ours, one per round
	peers         []peerResult // the peer's float32 runs, one per round (none without the peer)
	ampPeers      []peerResult // the peer's --amp bf16 runs (none unless ours ran bf16)
	Floor         floorResult

	// Set by summarise: medians over the rounds (the largest peak RSS), and
	// each round's ratios ours/peer, against the float32 peer and the
	// autocast one.
	Ours                          stepsResult
	OursRSS                       int64 // KiB
	Peer                          *peerResult
	TrainRatios, EvalRatios       []float64
	PeerAMP                       *peerResult `json:",omitempty"`
	AMPTrainRatios, AMPEvalRatios []float64   `json:",omitempty"`
}

// RatioLabel is the ratio table's first cell for ours against the peer's
// float32 run (amp false) or its autocast one: the config's label, followed
// by the two runs compared when either is not float32.
func (r row) RatioLabel(amp bool) string {
	if !amp && !r.Prec.IsBF16() && r.PeerAMP == nil {
		return r.Label()
	}
	mode := graph.FP32
	if amp {
		mode = graph.BF16
	}
	return r.Label() + ": " + r.Impl() + " / PyTorch " + peerName(mode)
}

// FloorLabel is the floor table's first cell: the label, and the precision
// when it is bf16.
func (r row) FloorLabel() string {
	if r.Prec.IsBF16() {
		return r.Label() + " " + string(r.Prec)
	}
	return r.Label()
}

// Impl names ours in the tables: "ours", or "ours bf16".
func (r row) Impl() string {
	if r.Prec.IsBF16() {
		return "ours " + string(r.Prec)
	}
	return "ours"
}

// ShowPeer says whether the table shows the peer's lines in this row: the
// config's first row (or every row of results without FirstOfConfig, one
// row per config).
func (r row) ShowPeer(rows []row) bool {
	if r.FirstOfConfig {
		return true
	}
	for _, o := range rows {
		if o.FirstOfConfig {
			return false
		}
	}
	return true
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
	r.Peer, r.TrainRatios, r.EvalRatios = r.peerMedians(r.peers)
	r.PeerAMP, r.AMPTrainRatios, r.AMPEvalRatios = r.peerMedians(r.ampPeers)
}

// peerMedians is the median of the peer's rounds (nil when it has none,
// the largest peak RSS) and each round's ratios ours/peer.
func (r *row) peerMedians(peers []peerResult) (med *peerResult, train, eval []float64) {
	if len(peers) == 0 {
		return nil, nil, nil
	}
	p := peers[0]
	var ptr, pev []float64
	for i, q := range peers {
		ptr, pev = append(ptr, q.TrainImgS), append(pev, q.EvalImgS)
		p.RSS = max(p.RSS, q.RSS)
		if i < len(r.rounds) {
			train = append(train, r.rounds[i].ours.TrainImgS/q.TrainImgS)
			eval = append(eval, r.rounds[i].ours.EvalImgS/q.EvalImgS)
		}
	}
	p.TrainImgS, p.EvalImgS = median(ptr), median(pev)
	return &p, train, eval
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

// peakCells are a bf16 row's cells against the peer's best run (the
// faster of its float32 and autocast medians, train and eval each) and the
// instruction's peak: the peer's best GFLOP/s, ours/that, the peak/that
// (the most ours/that can be), and ours/the peak.
type peakCells struct {
	PeerTrain, PeerEval   float64
	OursTrain, OursEval   float64
	CeilTrain, CeilEval   float64
	ShareTrain, ShareEval float64
}

// VsPeak is r's peakCells for a peak in GFLOP/s; nil when r is not bf16
// or the peer did not run.
func (r row) VsPeak(peak float64) *peakCells {
	if !r.Prec.IsBF16() || r.Peer == nil || !(peak > 0) {
		return nil
	}
	var c peakCells
	bestTrain, bestEval := r.Peer.TrainImgS, r.Peer.EvalImgS
	if p := r.PeerAMP; p != nil {
		bestTrain, bestEval = max(bestTrain, p.TrainImgS), max(bestEval, p.EvalImgS)
	}
	c.PeerTrain, c.PeerEval = r.GF(bestTrain, 3), r.GF(bestEval, 1)
	c.OursTrain, c.OursEval = r.Ours.TrainImgS/bestTrain, r.Ours.EvalImgS/bestEval
	c.CeilTrain, c.CeilEval = peak/c.PeerTrain, peak/c.PeerEval
	c.ShareTrain, c.ShareEval = r.GF(r.Ours.TrainImgS, 3)/peak, r.GF(r.Ours.EvalImgS, 1)/peak
	return &c
}

// AnyVsPeak says whether a row has peakCells: the table of the bf16 rows
// against the peak is shown.
func (r results) AnyVsPeak() bool {
	for _, row := range r.Rows {
		if row.VsPeak(r.Header.BF16Peak) != nil {
			return true
		}
	}
	return false
}

// Label is the config's label.
func (r row) Label() string { return r.Cfg.label() }

// GF is the rate of imgS images/s at mult× forward FLOPs, in GFLOP/s.
func (r row) GF(imgS, mult float64) float64 { return gflops(imgS, mult, r.Cfg) }

// MiB is a peak RSS in MiB.
func (r row) MiB(kib int64) float64 { return mib(kib) }

// PeerStepMs is the training step time of the peer's run p.
func (r row) PeerStepMs(p *peerResult) float64 { return 1000 * float64(r.Cfg.Batch) / p.TrainImgS }

// RSSRatio is the peak RSS ours/the peer's run p.
func (r row) RSSRatio(p *peerResult) float64 { return float64(r.OursRSS) / float64(p.RSS) }

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

// AnyBF16 says whether ours ran bf16 in any row.
func (r results) AnyBF16() bool {
	for _, row := range r.Rows {
		if row.Prec.IsBF16() {
			return true
		}
	}
	return false
}

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
