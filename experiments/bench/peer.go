package main

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/vitgo/vit/experiments/internal/harness"
)

// peerResult is the peer's BENCH line, its banner and its peak RSS.
type peerResult struct {
	TrainImgS   float64 `json:"train_img_s"`
	EvalImgS    float64 `json:"eval_img_s"`
	TrainGFLOPS float64 `json:"train_gflop_s"`
	EvalGFLOPS  float64 `json:"eval_gflop_s"`
	Torch       string  `json:"torch"` // from the banner, e.g. "torch 1.13.1"
	BLAS        string  `json:"blas"`  // the BLAS library torch loaded (banner)
	RSS         int64   `json:"rss"`   // KiB, from the child's rusage
}

// peerArgs is the peer's command line for bc: vit_ref.py's bench mode
// (3 warm-up steps, then steps timed training steps and eval forwards of one
// batch). --limit-train batch keeps only one batch of MNIST as float
// tensors, since the bench uses no more; it changes the peak RSS (not the
// speed) by the 188 MB the whole training set would take.
func peerArgs(script string, bc benchConfig, batch, threads, steps int) []string {
	itoa := strconv.Itoa
	return []string{script, "--data", "mnist", "--img", itoa(bc.Img), "--patch", itoa(bc.Patch), "--in-chans", itoa(bc.Chans),
		"--dim", itoa(bc.Dim), "--depth", itoa(bc.Depth), "--heads", itoa(bc.Heads), "--mlp-ratio", itoa(mlpRatio),
		"--batch", itoa(batch), "--threads", itoa(threads), "--bench-steps", itoa(steps), "--limit-train", itoa(batch)}
}

// runPeer runs the PyTorch peer on bc and reads its results.
func runPeer(python, script string, bc benchConfig, batch, threads, steps int) (peerResult, error) {
	cmd := exec.Command(python, peerArgs(script, bc, batch, threads, steps)...)
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

// parsePeer reads the peer's output: the "torch V threads N blas LIB"
// banner and the "BENCH {…}" line.
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
		f := strings.Fields(sc.Text())
		if len(f) >= 6 && f[0] == "torch" && f[2] == "threads" && f[4] == "blas" {
			p.Torch, p.BLAS = "torch "+f[1], strings.Join(f[5:], " ")
		}
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
