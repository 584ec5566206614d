package main

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/vitgo/vit/experiments/internal/harness"
	"github.com/vitgo/vit/graph"
)

// peerResult is the peer's BENCH line, its banner and its peak RSS.
type peerResult struct {
	TrainImgS   float64 `json:"train_img_s"`
	EvalImgS    float64 `json:"eval_img_s"`
	TrainGFLOPS float64 `json:"train_gflop_s"`
	EvalGFLOPS  float64 `json:"eval_gflop_s"`
	// From the banner, "torch V threads N blas LIB (OpenBLAS core CORE[; the
	// library chose CHOSEN for this CPU, overridden])".
	Torch      string `json:"torch"`                 // e.g. "torch 1.13.1"
	BLAS       string `json:"blas"`                  // the BLAS library torch loaded, its path
	BLASCore   string `json:"blas_core,omitempty"`   // the kernel family OpenBLAS ran, e.g. "SkylakeX"; "" when not reported
	BLASChosen string `json:"blas_chosen,omitempty"` // the family OpenBLAS itself chose, when vit_ref.py overrode it
	RSS        int64  `json:"rss"`                   // KiB, from the child's rusage
}

// banner matches the peer's first line (vit_ref.py's main and blas_in_use).
var banner = regexp.MustCompile(`^torch (\S+) threads \d+ blas (\S+)(?: \(OpenBLAS core ([^;)]+)(?:; the library chose (\S+) for this CPU, overridden)?\))?`)

// fallbackCores are OpenBLAS's kernel families without AVX, as
// openblas_get_corename names them (lower case): the generic SSE kernels an
// OpenBLAS release older than the CPU falls back to ("Prescott"), or a
// build without dynamic dispatch runs.
var fallbackCores = map[string]bool{
	"unknown": true, "generic": true, "katmai": true, "coppermine": true, "northwood": true, "prescott": true,
	"banias": true, "atom": true, "core2": true, "penryn": true, "dunnington": true, "nehalem": true,
	"athlon": true, "opteron": true, "opteron_sse3": true, "barcelona": true, "nano": true, "bobcat": true,
}

// Fallback says whether the peer's BLAS ran one of OpenBLAS's generic
// kernel families without AVX (fallbackCores): its SGEMM then runs at a
// fraction of its speed on this CPU and a ratio against it flatters ours.
func (p peerResult) Fallback() bool { return fallbackCores[strings.ToLower(p.BLASCore)] }

// Describe is the peer in one line: torch's version, the BLAS library
// (the last two elements of its path, which name the build) and the
// kernel family it ran, e.g. "torch 1.13.1, openblas-openmp/libblas.so.3,
// OpenBLAS core SkylakeX".
func (p peerResult) Describe() string {
	torch, lib := p.Torch, p.BLAS
	if torch == "" {
		torch = "torch version not reported"
	}
	if lib == "" {
		lib = "BLAS not reported"
	} else if dir, file := filepath.Split(lib); dir != "" {
		lib = filepath.Join(filepath.Base(dir), file)
	}
	core := "BLAS core not reported"
	if p.BLASCore != "" {
		core = "OpenBLAS core " + p.BLASCore
		if p.BLASChosen != "" {
			core += " (set by vit_ref.py; OpenBLAS chose " + p.BLASChosen + ")"
		}
	}
	return torch + ", " + lib + ", " + core
}

// peerName names the peer's run in mode: "fp32", or "amp bf16" for
// torch.autocast bfloat16 (vit_ref.py --amp bf16).
func peerName(mode graph.Precision) string {
	if mode.IsBF16() {
		return "amp bf16"
	}
	return "fp32"
}

// peerArgs is the peer's command line for bc: vit_ref.py's bench mode
// (3 warm-up steps, then steps timed training steps and eval forwards of one
// batch). --limit-train batch keeps only one batch of MNIST as float
// tensors, since the bench uses no more; it changes the peak RSS (not the
// speed) by the 188 MB the whole training set would take. Mode bf16 adds
// --amp bf16: forward and loss under torch.autocast("cpu", bfloat16).
func peerArgs(script string, bc benchConfig, batch, threads, steps int, mode graph.Precision) []string {
	itoa := strconv.Itoa
	var amp []string
	if mode.IsBF16() {
		amp = []string{"--amp", "bf16"}
	}
	return append([]string{script, "--data", "mnist", "--img", itoa(bc.Img), "--patch", itoa(bc.Patch), "--in-chans", itoa(bc.Chans),
		"--dim", itoa(bc.Dim), "--depth", itoa(bc.Depth), "--heads", itoa(bc.Heads), "--mlp-ratio", itoa(mlpRatio),
		"--batch", itoa(batch), "--threads", itoa(threads), "--bench-steps", itoa(steps), "--limit-train", itoa(batch)}, amp...)
}

// runPeer runs the PyTorch peer on bc in mode (fp32, or bf16 for --amp
// bf16) and reads its results.
func runPeer(python, script string, bc benchConfig, batch, threads, steps int, mode graph.Precision) (peerResult, error) {
	cmd := exec.Command(python, peerArgs(script, bc, batch, threads, steps, mode)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return peerResult{}, fmt.Errorf("%s %s: %w\n%s", python, script, err, lastLines(stderr.String(), 10))
	}
	p, err := parsePeer(stdout.Bytes())
	if err != nil {
		return p, fmt.Errorf("%s: %w", script, err)
	}
	p.RSS = harness.MaxRSS(cmd.ProcessState)
	return p, nil
}

// refine replaces the peer's img/s, which vit_ref.py rounds to 0.1 (±5 % at
// ViT-B/16's 1 img/s), by the rate its GFLOP/s imply: those are its
// unrounded img/s times 3·f (training) or f (eval), rounded to 0.01, where
// f is the forward FLOPs per image its banner prints ("fwd MFLOP/img").
// A rate whose GFLOP/s disagree with the rounded img/s by more than the two
// roundings allow is left as it was.
func (p *peerResult) refine(f float64) {
	one := func(imgS *float64, gflops, mult float64) {
		if gflops <= 0 || f <= 0 {
			return
		}
		v := gflops * 1e9 / (mult * f)
		if math.Abs(v-*imgS) <= 0.05+0.005e9/(mult*f)+1e-9 {
			*imgS = v
		}
	}
	one(&p.TrainImgS, p.TrainGFLOPS, 3)
	one(&p.EvalImgS, p.EvalGFLOPS, 1)
}

// parsePeer reads the peer's output: the banner (banner) and the
// "BENCH {…}" line.
func parsePeer(out []byte) (peerResult, error) {
	var p peerResult
	if err := harness.DecodeResult(out, "BENCH ", &p); err != nil {
		return p, err
	}
	if p.TrainImgS <= 0 || p.EvalImgS <= 0 {
		return p, fmt.Errorf("BENCH line has no positive train_img_s and eval_img_s")
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if m := banner.FindStringSubmatch(sc.Text()); m != nil {
			p.Torch, p.BLAS, p.BLASCore, p.BLASChosen = "torch "+m[1], m[2], m[3], m[4]
		}
		f := strings.Fields(sc.Text())
		for i := 0; i+1 < len(f); i++ {
			if f[i] == "MFLOP/img" {
				if mf, err := strconv.ParseFloat(f[i+1], 64); err == nil && mf > 0 {
					p.refine(mf * 1e6)
				}
			}
		}
	}
	return p, nil
}

// defaultPeerScript is ../shared/bench/vit_ref.py from the working
// directory, the repository root every experiment runs from.
func defaultPeerScript() (string, error) {
	p := filepath.Join("..", "shared", "bench", "vit_ref.py")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("peer script: %w (run from the repository root, or pass -peer-script or -peer=false)", err)
	}
	return p, nil
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
