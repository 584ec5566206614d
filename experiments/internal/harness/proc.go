package harness

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/optim"
	"github.com/vitgo/vit/train"
)

// The benchmarks run every measurement in a child process (their own binary
// again, the job in an environment variable), so that its peak RSS and its
// GOMAXPROCS are its own. A child prints its result as one line,
// ResultPrefix followed by JSON.

// ResultPrefix starts a child's result line on stdout.
const ResultPrefix = "RESULT "

// ServeChild returns at once unless the environment variable env is set.
// If it is, this process is a child: ServeChild runs do with its value,
// prints the result (unless nil) as the ResultPrefix line and exits, with
// status 1 after printing the error if do fails.
func ServeChild(env string, do func(job string) (any, error)) {
	job, ok := os.LookupEnv(env)
	if !ok {
		return
	}
	res, err := do(job)
	if err == nil && res != nil {
		var b []byte
		if b, err = json.Marshal(res); err == nil {
			fmt.Printf("%s%s\n", ResultPrefix, b)
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s child: %v\n", filepath.Base(os.Args[0]), err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Self is the path of this binary, to start children with.
func Self() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("locate this binary: %w", err)
	}
	return exe, nil
}

// RunResult runs cmd, with env added to its environment, decodes the last
// line of its stdout that starts with prefix (the JSON after it) into out,
// and returns the process's peak resident set in KiB (rusage ru_maxrss; 0
// where the platform does not say). cmd.Stderr, if nil, is os.Stderr.
func RunResult(cmd *exec.Cmd, prefix string, out any, env ...string) (rssKiB int64, err error) {
	cmd.Env = append(os.Environ(), env...)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if cmd.Stderr == nil {
		cmd.Stderr = os.Stderr
	}
	if err := cmd.Run(); err != nil {
		return 0, err
	}
	return MaxRSS(cmd.ProcessState), DecodeResult(stdout.Bytes(), prefix, out)
}

// MaxRSS is a finished process's peak resident set in KiB (Linux reports
// ru_maxrss in KiB); 0 where the platform does not say.
func MaxRSS(ps *os.ProcessState) int64 {
	if ps == nil {
		return 0
	}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return int64(ru.Maxrss)
	}
	return 0
}

// DecodeResult finds the last line of text starting with prefix and decodes
// the JSON after it into out.
func DecodeResult(text []byte, prefix string, out any) error {
	var last string
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, prefix) {
			last = strings.TrimPrefix(line, prefix)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	name := strings.TrimSpace(prefix)
	if last == "" {
		return fmt.Errorf("no %q line in its output", name)
	}
	if err := json.Unmarshal([]byte(last), out); err != nil {
		return fmt.Errorf("decode %q line: %w", name, err)
	}
	return nil
}

// NewStep builds a float32 model of c initialised with seed, and its
// training step on batch images as train.Run builds it (train.Step, the
// default optimizer config, seed). sc supplies the rest: LR, Arena, Comm, ….
func NewStep(c layers.Config, batch int, seed uint64, sc train.StepConfig) (*train.Step, *layers.VisionTransformer, error) {
	m, err := layers.New(c, tensor.Float32, seed)
	if err != nil {
		return nil, nil, err
	}
	sc.Batch, sc.Seed, sc.Optim = batch, seed, optim.DefaultConfig()
	s, err := train.NewStep(m, sc)
	return s, m, err
}

// RandomBatch is a fixed random batch for timing steps: n images of size
// values, each pixel(rng), then n one-hot targets over classes, drawn from
// rng in that order.
func RandomBatch(rng *rand.Rand, n, size, classes int, pixel func(*rand.Rand) float64) (x, tgt []float32) {
	x = make([]float32, n*size)
	for i := range x {
		x[i] = float32(pixel(rng))
	}
	tgt = make([]float32, n*classes)
	for b := range n {
		tgt[b*classes+rng.IntN(classes)] = 1
	}
	return x, tgt
}

// Parts names the forward pass's matrix products, in the order of a table.
var Parts = []string{"patch proj", "qkv", "scores QKᵀ", "weighted sum PV", "attn proj", "MLP", "head"}

// quadratic marks the parts whose cost grows with T² (the rest grow with T
// or not at all).
var quadratic = map[string]bool{"scores QKᵀ": true, "weighted sum PV": true}

// Flops are FLOPs by part (Parts).
type Flops map[string]float64

// ForwardFLOPs is the forward matrix-product FLOPs of one image by part, counting a
// multiply-add as 2 and ignoring LayerNorm, softmax, GELU, residual adds and
// the token ops (all O(T·D)). With T = N + 1 tokens, width D, hidden width
// Dh = mlp_ratio·D, depth L, K classes:
//
//	patch proj   2·N·(C·P²)·D     = 2·C·H·W·D (independent of P)
//	qkv          L · 2·T·D·3D
//	scores QKᵀ   L · 2·T²·D        (H heads × T² × D/H)
//	PV           L · 2·T²·D
//	attn proj    L · 2·T·D²
//	MLP          L · 2·2·T·D·Dh
//	head         2·D·K             (the class token only)
func ForwardFLOPs(c layers.Config) Flops {
	n := float64(c.NumPatches())
	t := n + 1
	d, dh, l := float64(c.EmbedDim), float64(c.Hidden()), float64(c.Depth)
	cpp := float64(c.InChans * c.PatchSize * c.PatchSize)
	return Flops{
		"patch proj":      2 * n * cpp * d,
		"qkv":             l * 2 * t * d * 3 * d,
		"scores QKᵀ":      l * 2 * t * t * d,
		"weighted sum PV": l * 2 * t * t * d,
		"attn proj":       l * 2 * t * d * d,
		"MLP":             l * 2 * 2 * t * d * dh,
		"head":            2 * d * float64(c.NumClasses),
	}
}

// Total sums the parts: what vit_ref.py's forward_flops counts.
func (f Flops) Total() float64 {
	s := 0.0
	for _, v := range f {
		s += v
	}
	return s
}

// QuadShare is the fraction of the forward FLOPs in the T² parts.
func (f Flops) QuadShare() float64 {
	q := 0.0
	for p, v := range f {
		if quadratic[p] {
			q += v
		}
	}
	return q / f.Total()
}
