package train

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/internal/memory"
	"github.com/vitgo/vit/layers"
)

// TestCheckMemory: an estimate above the available memory is a
// *ConfigError naming the key that contributes most, wrapping a
// *MemoryError with both figures; at or below it, or with nothing known, it
// passes.
func TestCheckMemory(t *testing.T) {
	base := DefaultConfig()
	base.Model = layers.Presets["vit_base_patch16_224"]
	for _, tc := range []struct {
		name string
		edit func(*Config)
		key  string
	}{
		{"training batch", func(c *Config) { c.Train.BatchSize = 4096 }, "train.batch_size"},
		{"eval batch", func(c *Config) { c.Train.BatchSize, c.Train.EvalBatchSize = 1, 8192 }, "train.eval_batch_size"},
		{"model size", func(c *Config) {
			c.Model.EmbedDim, c.Model.Depth, c.Model.NumHeads, c.Train.BatchSize = 16384, 256, 16, 1
		}, "model.embed_dim"},
		{"prefetch", func(c *Config) {
			c.Model.EmbedDim, c.Model.Depth, c.Model.NumHeads, c.Model.ImgSize, c.Model.PatchSize = 8, 1, 1, layers.Size2{4096, 4096}, 256
			c.Train.BatchSize, c.Data.Prefetch = 64, 256
		}, "data.prefetch"},
	} {
		cfg := base
		tc.edit(&cfg)
		if err := cfg.Validate(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		e := EstimateMemory(cfg)
		err := CheckMemory(e, 8<<30, "test")
		var ce *ConfigError
		var me *MemoryError
		if !errors.As(err, &ce) || ce.Key != tc.key || !errors.As(err, &me) || me.Need != e.Peak || me.Have != 8<<30 {
			t.Errorf("%s: %v, want a ConfigError for %s wrapping a MemoryError", tc.name, err, tc.key)
		}
		if err := CheckMemory(e, e.Peak, "test"); err != nil {
			t.Errorf("%s: refused at exactly its estimate: %v", tc.name, err)
		}
		if err := CheckMemory(e, 0, ""); err != nil {
			t.Errorf("%s: refused with unknown memory: %v", tc.name, err)
		}
	}
}

// TestEstimateTerms: the parts scale as the model says — activations with
// the batch, attention with tokens², parameters with the weights, EMA only
// when on — and the parts add up to the peak.
func TestEstimateTerms(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Model = layers.Presets["vit_small_patch16_224"]
	cfg.Train.BatchSize = 32
	e := EstimateMemory(cfg)
	if got := e.Params + e.Grads + e.Optimizer + e.EMA + e.TrainAct + e.EvalAct + e.Data + e.Prefetch + e.Save + e.Runtime; got != e.Peak {
		t.Errorf("parts sum to %d, peak %d", got, e.Peak)
	}
	if p := int64(layers.CountParams(cfg.Model)) * 4; e.Params != p || e.Grads != p || e.Optimizer != 2*p || e.EMA != 0 {
		t.Errorf("params %d grads %d optimizer %d ema %d, want %d, %d, %d, 0", e.Params, e.Grads, e.Optimizer, e.EMA, p, p, 2*p)
	}
	cfg.Optim.EMA = true
	if EstimateMemory(cfg).EMA != e.Params {
		t.Error("EMA not counted")
	}
	cfg.Optim.EMA = false
	cfg.Train.BatchSize = 64
	if e2 := EstimateMemory(cfg); e2.TrainAct < 2*e.TrainAct*99/100 || e2.TrainAct > 2*e.TrainAct*101/100 {
		t.Errorf("doubling the batch: training activations %d → %d", e.TrainAct, e2.TrainAct)
	}
	cfg.Train.BatchSize = 32
	cfg.Model.PatchSize = 8 // 4× the patches: the attention scratch (tokens² per goroutine, K/V packs per token) grows 4–16×
	if e4 := EstimateMemory(cfg); e4.Attention <= 4*e.Attention || e4.Attention > 16*e.Attention {
		t.Errorf("4× tokens: attention %d → %d, want between 4× and 16×", e.Attention, e4.Attention)
	}
	// No graph stores batch·heads·tokens² maps: at batch 32 and 197 tokens
	// they would be 4·32·6·197²·12 bytes, 357 MB, for ViT-S.
	if e.Attention > 50<<20 {
		t.Errorf("attention %d bytes: the estimate counts stored maps", e.Attention)
	}
	if b := EstimateEvalMemory(cfg); b.Grads != 0 || b.Optimizer != 0 || b.TrainAct != 0 {
		t.Errorf("evaluation estimate counts training state: %+v", b)
	}
}

// TestEstimateBF16: the training activations of the estimate follow
// train.precision and train.recompute: for ViT-S/16 at batch 8 each is
// within [1, 1.2] of the arena that graph.PlanBuffers plans for the
// training graph (fp32; bf16; bf16 with recompute mlp; with recompute
// block, without and with drop path), so the estimate neither refuses a
// bf16 run for fp32's memory nor counts less than the graph takes.
func TestEstimateBF16(t *testing.T) {
	if testing.Short() {
		t.Skip("plans four ViT-S/16 training graphs")
	}
	cfg := DefaultConfig()
	cfg.Model = layers.Presets["vit_small_patch16_224"]
	cfg.Train.BatchSize = 8
	// estimate checks cfg's estimate against the arena planned for its
	// training graph and returns the estimate.
	estimate := func(what string) int64 {
		t.Helper()
		m, err := layers.New(cfg.Model, tensor.Float32, 0)
		if err != nil {
			t.Fatal(err)
		}
		est := EstimateMemory(cfg).TrainAct
		tg, _, err := buildTrainGraph(m, cfg.Train.BatchSize, 0, layers.BuildOptions{Precision: cfg.Train.Precision, Recompute: cfg.Train.Recompute}, graph.NewArena(), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		arena := int64(tg.Plan.ArenaMiB * (1 << 20))
		tg.VM.Close()
		t.Logf("%s: estimate %s, planned arena %s", what, memory.FormatBytes(est), memory.FormatBytes(arena))
		if r := float64(est) / float64(arena); r < 1 || r > 1.2 {
			t.Errorf("%s: training activations estimated at %s, %.2f× the planned arena %s", what, memory.FormatBytes(est), r, memory.FormatBytes(arena))
		}
		return est
	}
	prev := int64(1) << 62
	for _, v := range []struct {
		prec graph.Precision
		rc   layers.Recompute
	}{{graph.FP32, layers.RecomputeNone}, {graph.BF16, layers.RecomputeNone}, {graph.BF16, layers.RecomputeMLP}, {graph.BF16, layers.RecomputeBlock}} {
		cfg.Train.Precision, cfg.Train.Recompute = v.prec, v.rc
		what := fmt.Sprintf("%s, recompute %s", v.prec, v.rc)
		est := estimate(what)
		if est >= prev {
			t.Errorf("%s: estimate %s, not below the previous variant's %s", what, memory.FormatBytes(est), memory.FormatBytes(prev))
		}
		prev = est
	}
	// With drop path, recompute block keeps each block's drop-path output
	// in place of the sum it no longer keeps: the estimate still covers it.
	cfg.Model.DropPathRate = 0.1
	estimate("bf16, recompute block, drop path 0.1")
}

// TestSummaryRefusesBeforeAllocating: -dry-run on a config that cannot fit
// prints the estimate and returns the memory error without allocating it.
func TestSummaryRefusesBeforeAllocating(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Model = layers.Presets["vit_base_patch16_224"]
	cfg.Model.EmbedDim, cfg.Model.Depth, cfg.Model.NumHeads = 16384, 256, 16 // ~825G parameters
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var out strings.Builder
	err := Summary(&out, cfg)
	runtime.ReadMemStats(&after)
	var me *MemoryError
	if !errors.As(err, &me) {
		t.Fatalf("Summary: %v, want a MemoryError", err)
	}
	if !strings.Contains(out.String(), "peak") {
		t.Errorf("the estimate was not printed:\n%s", out.String())
	}
	if d := after.TotalAlloc - before.TotalAlloc; d > 64<<20 {
		t.Errorf("Summary allocated %d MiB before refusing", d>>20)
	}
}

// TestEstimateMatchesMeasuredRSS trains TINY (configs/mnist_vit_tiny_p4.yaml)
// for a few steps in a child process, as cmd/train runs it (GOGC 20), and
// compares the child's peak RSS (VmHWM) with EstimateMemory: within 15%.
// SMALL and ViT-S/16 were compared by hand (README).
func TestEstimateMatchesMeasuredRSS(t *testing.T) {
	if os.Getenv("VIT_RSS_CHILD") != "" {
		rssChild()
		return
	}
	if testing.Short() {
		t.Skip("trains TINY in a child process")
	}
	if _, err := data.Open(data.Config{LimitTrain: 1, LimitVal: 1}, data.Val, 1); err != nil {
		t.Skipf("MNIST not available: %v", err)
	}
	cfg, err := LoadConfig("../configs/mnist_vit_tiny_p4.yaml", []string{"train.max_steps=3", "data.limit_val=512"})
	if err != nil {
		t.Fatal(err)
	}
	want := EstimateMemory(cfg).Peak
	cmd := exec.Command(os.Args[0], "-test.run=^TestEstimateMatchesMeasuredRSS$")
	cmd.Env = append(os.Environ(), "VIT_RSS_CHILD="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var got int64
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM_bytes "); ok {
			got, _ = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	if got == 0 {
		t.Fatalf("no VmHWM in the child's output:\n%s", out)
	}
	rel := float64(want-got) / float64(got)
	t.Logf("TINY: estimate %s, measured peak RSS %s (%+.1f%%)", memory.FormatBytes(want), memory.FormatBytes(got), 100*rel)
	if rel > 0.15 || rel < -0.15 {
		t.Errorf("estimate %s is %+.1f%% off the measured %s", memory.FormatBytes(want), 100*rel, memory.FormatBytes(got))
	}
}

// rssChild is the child of TestEstimateMatchesMeasuredRSS.
func rssChild() {
	debug.SetGCPercent(20) // as cmd/train
	cfg, err := LoadConfig("../configs/mnist_vit_tiny_p4.yaml", []string{"train.max_steps=3", "data.limit_val=512",
		"train.out_dir=" + os.Getenv("VIT_RSS_CHILD")})
	if err == nil {
		_, err = Run(context.Background(), cfg, Options{Log: quietLog()})
	}
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	f, err := os.Open("/proc/self/status")
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			fmt.Printf("VmHWM_bytes %d\n", kb<<10)
		}
	}
}

// TestMemoryEstimateFrozen: frozen tensors (finetune.linear_probe,
// finetune.freeze) get no gradient and no AdamW moments, so the estimate
// counts them for neither.
func TestMemoryEstimateFrozen(t *testing.T) {
	cfg := DefaultConfig()
	full := EstimateMemory(cfg)
	if full.Grads != full.Params || full.Optimizer != 2*full.Params {
		t.Fatalf("all trained: grads %d, optimizer %d, params %d", full.Grads, full.Optimizer, full.Params)
	}
	cfg.Finetune.LinearProbe = true
	probe := EstimateMemory(cfg)
	head := int64(4 * (cfg.Model.NumClasses*cfg.Model.EmbedDim + cfg.Model.NumClasses))
	if probe.Grads != head || probe.Optimizer != 2*head {
		t.Fatalf("linear probe: grads %d, optimizer %d; want %d and %d (the head alone)", probe.Grads, probe.Optimizer, head, 2*head)
	}
	if probe.Params != full.Params {
		t.Fatalf("linear probe: params %d, want every weight (%d)", probe.Params, full.Params)
	}
}
