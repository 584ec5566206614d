package classify_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/checkpoint"
	"github.com/vitgo/vit/classify"
	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/layers"
)

// rssEnv names the model TestResidentWeights measures; rssChild marks its
// child processes, one per precision.
const (
	rssEnv   = "VIT_RSS_CHECKPOINT"
	rssChild = "VIT_RSS_CHILD"
)

// rssResult is one child's line.
type rssResult struct {
	Precision   string
	BaseKiB     int64 // VmRSS before loading
	ServingKiB  int64 // VmRSS after Load and one image classified
	WeightBytes int64 // Classifier.WeightBytes
}

// TestResidentWeights measures, in one child process per precision, the
// resident memory (VmRSS after runtime.GC and debug.FreeOSMemory) of a
// classifier serving a checkpoint (one lane of batch 1, one image
// classified), beside the bytes its weights hold (Classifier.WeightBytes).
// It is a measurement, not a check, and runs only when VIT_RSS_CHECKPOINT
// names a model file of ours or a timm ViT state_dict (converted first):
//
//	VIT_RSS_CHECKPOINT=vit_s.safetensors go test ./classify -run TestResidentWeights -v
func TestResidentWeights(t *testing.T) {
	path := os.Getenv(rssEnv)
	if prec, ok := os.LookupEnv(rssChild); ok {
		rssMeasure(t, path, graph.Precision(prec))
		return
	}
	if path == "" {
		t.Skip(rssEnv + " names no checkpoint")
	}
	path = ourModelFile(t, path)
	var rows []rssResult
	for _, prec := range []graph.Precision{graph.FP32, graph.INT8} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestResidentWeights$", "-test.v")
		cmd.Env = append(os.Environ(), rssEnv+"="+path, rssChild+"="+string(prec))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s child: %v\n%s", prec, err, out)
		}
		var r rssResult
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			if s, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "RSS "); ok {
				if err := json.Unmarshal([]byte(s), &r); err != nil {
					t.Fatal(err)
				}
			}
		}
		if r.Precision == "" {
			t.Fatalf("%s child printed no RSS line:\n%s", prec, out)
		}
		rows = append(rows, r)
	}
	for _, r := range rows {
		t.Logf("%s: RSS %.1f MiB serving (%.1f MiB base, %.1f MiB more), weights %.1f MiB; ratios to %s: RSS %.3f, RSS over base %.3f, weights %.3f",
			r.Precision, mib(r.ServingKiB<<10), mib(r.BaseKiB<<10), mib((r.ServingKiB-r.BaseKiB)<<10), mib(r.WeightBytes), rows[0].Precision,
			float64(r.ServingKiB)/float64(rows[0].ServingKiB), float64(r.ServingKiB-r.BaseKiB)/float64(rows[0].ServingKiB-rows[0].BaseKiB),
			float64(r.WeightBytes)/float64(rows[0].WeightBytes))
	}
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// rssMeasure is a child's work: load, classify one image, measure.
func rssMeasure(t *testing.T, path string, prec graph.Precision) {
	r := rssResult{Precision: string(prec), BaseKiB: vmRSS(t)}
	c, err := classify.Load(path, classify.Options{PoolSize: 1, MaxBatch: 1, Precision: prec})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Classify(context.Background(), []image.Image{image.NewGray(image.Rect(0, 0, 224, 224))}); err != nil {
		t.Fatal(err)
	}
	r.ServingKiB = vmRSS(t)
	r.WeightBytes = c.WeightBytes()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("RSS %s\n", b)
}

// vmRSS is this process's VmRSS in KiB, after a collection that returns
// the freed memory to the system.
func vmRSS(t *testing.T) int64 {
	runtime.GC()
	debug.FreeOSMemory()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no VmRSS here: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kib, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kib
		}
	}
	t.Fatal("/proc/self/status has no VmRSS line")
	return 0
}

// ourModelFile returns path if it is a model file of ours, else converts a
// timm ViT state_dict (checkpoint.TimmConfig, LoadWeights) into one in a
// temporary directory, with ImageNet's normalization.
func ourModelFile(t *testing.T, path string) string {
	f, _, ok, err := checkpoint.ReadModel(path)
	if err != nil {
		t.Fatal(err)
	}
	if ok {
		return path
	}
	cfg, err := checkpoint.TimmConfig(f, 0)
	if err != nil {
		t.Fatal(err)
	}
	m, err := layers.New(cfg, tensor.Float32, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := checkpoint.LoadWeights(m, f, checkpoint.LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "model.safetensors")
	meta := checkpoint.ModelMeta{Dataset: "folder", Mean: []float64{0.485, 0.456, 0.406}, Std: []float64{0.229, 0.224, 0.225}}
	if err := checkpoint.SaveModel(out, m, meta, nil); err != nil {
		t.Fatal(err)
	}
	return out
}
