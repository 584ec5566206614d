package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/internal/enum"
	"github.com/vitgo/vit/layers"
)

// TestPrecisionFlag: -precision takes a list of precisions (duplicates
// dropped), refuses an unknown or empty one naming the flag before
// measuring, and bf16 among them adds the peer's --amp bf16 run.
func TestPrecisionFlag(t *testing.T) {
	for _, c := range []struct {
		flag string
		want []graph.Precision
	}{
		{"fp32", []graph.Precision{graph.FP32}},
		{"bf16", []graph.Precision{graph.BF16}},
		{"fp32,bf16,fp32", []graph.Precision{graph.FP32, graph.BF16}},
		{"", []graph.Precision{graph.FP32}},
	} {
		got, err := opts{precision: c.flag}.precisions()
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("-precision %q: %v, %v; want %v", c.flag, got, err, c.want)
		}
	}
	for _, bad := range []string{"fp16", "fp32,", "bf16,float32"} {
		_, err := opts{precision: bad, configs: "tiny", rounds: 1, threads: 1, warmup: 1}.check()
		var ee *enum.Error
		if !errors.As(err, &ee) || !strings.Contains(err.Error(), "-precision") {
			t.Errorf("-precision %q: %v, want an *enum.Error naming -precision", bad, err)
		}
		if err := experiment.Run([]string{"-precision", bad, "-dir", t.TempDir()}, io.Discard); err == nil {
			t.Errorf("-precision %q: the command ran", bad)
		}
	}
	if got := peerModes([]graph.Precision{graph.FP32}); !slices.Equal(got, []graph.Precision{graph.FP32}) {
		t.Errorf("peer modes for fp32: %v", got)
	}
	if got := peerModes([]graph.Precision{graph.BF16}); !slices.Equal(got, []graph.Precision{graph.FP32, graph.BF16}) {
		t.Errorf("peer modes for bf16: %v", got)
	}
	_, err := opts{precision: "bf16", recompute: "blocks", configs: "tiny", rounds: 1, threads: 1, warmup: 1}.check()
	if err == nil || !strings.Contains(err.Error(), "-recompute") {
		t.Errorf("-recompute blocks: %v, want an error naming -recompute", err)
	}
	if _, err := (opts{precision: "fp32", recompute: "mlp", configs: "tiny", rounds: 1, threads: 1, warmup: 1}).check(); err == nil || !strings.Contains(err.Error(), "-recompute") {
		t.Errorf("-recompute mlp with -precision fp32: %v, want an error naming -recompute", err)
	}
	if _, err := (opts{precision: "fp32,bf16", recompute: "mlp", configs: "tiny", rounds: 1, threads: 1, warmup: 1}).check(); err != nil {
		t.Errorf("-recompute mlp with -precision fp32,bf16: %v", err)
	}
	bc := benchConfigs["tiny"]
	if got := strings.Join(peerArgs("p.py", bc, 128, 2, 3, graph.BF16), " "); !strings.HasSuffix(got, " --amp bf16") {
		t.Errorf("peer args in bf16: %q", got)
	}
	if got := strings.Join(peerArgs("p.py", bc, 128, 2, 3, graph.FP32), " "); strings.Contains(got, "--amp") {
		t.Errorf("peer args in fp32: %q", got)
	}
}

// TestTableWithBF16: with ours in fp32 and bf16, the tables show a row of
// ours per precision, the peer's float32 and autocast runs once per
// config, the ratios of each of ours against each peer run, and the
// precisions above the table.
func TestTableWithBF16(t *testing.T) {
	peer := func(imgS float64) *peerResult {
		return &peerResult{TrainImgS: imgS, EvalImgS: 4 * imgS, Torch: "torch 2.1.0", BLASCore: "SkylakeX", RSS: 200 << 10}
	}
	res := oneRow(peer(1000))
	r32 := res.Rows[0]
	r32.Prec, r32.FirstOfConfig = graph.FP32, true
	r32.PeerAMP, r32.AMPTrainRatios, r32.AMPEvalRatios = peer(800), []float64{2.5}, []float64{2.5}
	r16 := r32
	r16.Prec, r16.FirstOfConfig = graph.BF16, false
	r16.TrainRatios, r16.EvalRatios, r16.AMPTrainRatios, r16.AMPEvalRatios = []float64{3}, []float64{3}, []float64{3.75}, []float64{3.75}
	res.Rows = []row{r32, r16}
	res.Header.Precisions = []graph.Precision{graph.FP32, graph.BF16}
	res.Header.Recompute = layers.RecomputeMLP
	readme := renderTable(t, res)
	for _, want := range []string{
		"Precision: ours in fp32, bf16; our bf16 training steps recompute mlp (train.recompute)",
		"| TINY (d64 L4 h4) | ours | 205066 |",
		"| TINY (d64 L4 h4) | ours bf16 | 205066 |",
		"| TINY (d64 L4 h4) | PyTorch fp32 | 205066 | 1000 |",
		"| TINY (d64 L4 h4) | PyTorch amp bf16 | 205066 | 800 |",
		"| TINY (d64 L4 h4): ours / PyTorch fp32 | **2.00**",
		"| TINY (d64 L4 h4): ours / PyTorch amp bf16 | **2.50**",
		"| TINY (d64 L4 h4): ours bf16 / PyTorch fp32 | **3.00**",
		"| TINY (d64 L4 h4): ours bf16 / PyTorch amp bf16 | **3.75**",
		"| TINY (d64 L4 h4) bf16 |", // the floor
	} {
		if !strings.Contains(readme, want) {
			t.Errorf("README lacks %q:\n%s", want, latest(readme))
		}
	}
	if n := strings.Count(readme, "| PyTorch amp bf16 |"); n != 1 {
		t.Errorf("the peer's autocast line appears %d times, want once:\n%s", n, latest(readme))
	}
}

// TestTableVsPeak: with the instruction's peak measured, each bf16 row is
// set against the peer's best run (its faster mode, train and eval each:
// here autocast trains faster, float32 evaluates faster) and against the
// peak; the fp32 row gets no line, and without a peak there is no table.
func TestTableVsPeak(t *testing.T) {
	peer := func(train, eval float64) *peerResult {
		return &peerResult{TrainImgS: train, EvalImgS: eval, Torch: "torch 2.1.0", BLASCore: "SkylakeX", RSS: 200 << 10}
	}
	res := oneRow(peer(1000, 4000))
	r32 := res.Rows[0]
	r32.Prec, r32.FirstOfConfig = graph.FP32, true
	r32.PeerAMP = peer(1250, 3200)
	r16 := r32
	r16.Prec, r16.FirstOfConfig = graph.BF16, false
	res.Rows = []row{r32, r16}
	res.Header.Precisions = []graph.Precision{graph.FP32, graph.BF16}
	const title = "| config | the peer's best GFLOP/s: train, eval |"
	if readme := renderTable(t, res); strings.Contains(readme, title) {
		t.Errorf("a table against the peak without a peak:\n%s", latest(readme))
	}
	gfTrain, gfEval := r16.GF(1250, 3), r16.GF(4000, 1)
	res.Header.BF16Peak = 5 * gfTrain
	readme := latest(renderTable(t, res))
	// ours: 2000 and 8000 img/s (oneRow); so 1.60 and 2.00 of the peer's best
	want := fmt.Sprintf("| TINY (d64 L4 h4) | %.1f, %.1f | **1.60, 2.00** | 5.00, %.2f | %.2f, %.2f |",
		gfTrain, gfEval, 5*gfTrain/gfEval, r16.GF(2000, 3)/(5*gfTrain), r16.GF(8000, 1)/(5*gfTrain))
	if !strings.Contains(readme, title) || !strings.Contains(readme, want) {
		t.Errorf("README lacks %q:\n%s", want, readme)
	}
	if !strings.Contains(readme, fmt.Sprintf("alone: %.0f GFLOP/s on 2 threads", 5*gfTrain)) {
		t.Errorf("README does not give the peak:\n%s", readme)
	}
	_, tbl, _ := strings.Cut(readme, title)
	tbl, _, _ = strings.Cut(tbl, "\n\n")
	if n := strings.Count(tbl, "| TINY"); n != 1 {
		t.Errorf("%d rows against the peak, want 1 (bf16 only):\n%s", n, tbl)
	}
}
