package harness

import (
	"flag"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sirupsen/logrus"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/train"
)

func TestFlagsAndOverrides(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var b Budget
	b.Flags(fs, Budget{LimitTrain: 100, Epochs: 3, Seed: 7})
	fs.Bool("measure", true, "")
	fs.String("dir", "", "")
	if err := fs.Parse([]string{"-epochs", "5", "-set", "optim.lr=0.1", "-set", "train.epochs=9", "-measure=false", "-dir", "/tmp/x"}); err != nil {
		t.Fatal(err)
	}
	want := []string{"data.limit_train=100", "data.limit_val=0", "train.epochs=5", "train.max_steps=0", "train.seed=7",
		"train.out_dir=runs/x", "model.readout=mean", "optim.lr=0.1", "train.epochs=9"}
	if got := b.Overrides("runs/x", "model.readout=mean"); !slices.Equal(got, want) {
		t.Errorf("overrides\n got %q\nwant %q", got, want)
	}
	if got, want := commandLine("x", fs), "go run ./experiments/x -epochs 5 -measure=false -set optim.lr=0.1 -set train.epochs=9"; got != want {
		t.Errorf("command line\n got %q\nwant %q", got, want)
	}
}

func TestFinishedReadsBackOnlyCompleteMatchingRuns(t *testing.T) {
	dir := t.TempDir()
	cfg, err := train.LoadConfig("../../../configs/mnist_vit_tiny.yaml", []string{"train.epochs=2", "train.out_dir=" + dir})
	if err != nil {
		t.Fatal(err)
	}
	if finished(cfg) {
		t.Fatal("empty directory read back as finished")
	}
	y, err := cfg.YAML()
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(train.ConfigFile, string(y))
	const header = "epoch,step,lr,train_loss,val_loss,val_top1,val_top5\n"
	write(train.MetricsFile, header+"1,468,0.001,0.5,0.4,0.81,0.99\n")
	if finished(cfg) {
		t.Error("a run stopped after epoch 1 of 2 read back as finished")
	}
	write(train.MetricsFile, header+"1,468,0.001,0.5,0.4,0.95,0.99\n2,936,0.0001,0.3,0.2,0.93,0.99\n")
	if !finished(cfg) {
		t.Fatal("finished run not read back")
	}
	r := Run{Dir: dir, ReadBack: true}
	if err := r.readMetrics(); err != nil || r.Top1 != 0.93 || r.Loss != 0.2 || r.BestTop1 != 0.95 || r.Steps != 936 || len(r.Epochs) != 2 {
		t.Errorf("read back %+v, %v; want top-1 0.93, loss 0.2, best 0.95, step 936", r, err)
	}
	other := cfg
	other.Optim.LR *= 5
	if finished(other) {
		t.Error("a run with another config read back as finished")
	}
}

// TestRunAndRender runs a tiny experiment, then -render reproduces its
// README from results.json alone.
func TestRunAndRender(t *testing.T) {
	type res struct{ N int }
	x := Experiment[res]{Name: "t", Readme: "{{.Command}}: {{.R.N}}{{with .Note}} ({{.}}){{end}}\n",
		Flags:   func(fs *flag.FlagSet) { fs.Int("n", 3, "") },
		Measure: func(*Env) (res, error) { return res{N: 42}, nil }}
	dir := t.TempDir()
	if err := x.Run([]string{"-dir", dir, "-n", "4"}, io.Discard); err != nil {
		t.Fatal(err)
	}
	got, committed, err := x.Rerender(dir)
	if err != nil || string(got) != string(committed) || string(got) != "go run ./experiments/t -n 4: 42\n" {
		t.Errorf("rerender %q, committed %q, %v", got, committed, err)
	}
	x.Measure = nil // -render must not measure
	if err := x.Run([]string{"-dir", dir, "-render"}, io.Discard); err != nil {
		t.Fatal(err)
	}
}

// TestTrainEvaluateReadBack trains a few steps on real MNIST, then checks
// that Evaluate on the loaded checkpoint gives the run's own validation (the
// same loader as train.Run's), and that a second Train reads the run back.
func TestTrainEvaluateReadBack(t *testing.T) {
	if testing.Short() {
		t.Skip("trains")
	}
	e := &Env{Log: logrus.New()}
	e.Log.SetOutput(io.Discard)
	b := Budget{LimitTrain: 256, LimitVal: 100, Epochs: 1, MaxSteps: 2}
	dir := t.TempDir()
	cfgPath := "../../../configs/mnist_vit_tiny.yaml"
	r, err := e.Train(cfgPath, b.Overrides(dir, "train.batch_size=32")...)
	if err != nil {
		t.Fatal(err)
	}
	if r.ReadBack || r.Steps != 2 || len(r.Epochs) != 1 || r.Wall == 0 {
		t.Fatalf("first run: read back %v, steps %d, epochs %d, wall %v", r.ReadBack, r.Steps, len(r.Epochs), r.Wall)
	}
	m, meta, err := Model(r.Checkpoint, tensor.Float32)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := Evaluate(m, meta, r.Config)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Top1 != r.Top1 || math.Abs(ev.Loss-r.Loss) > 1e-6 || ev.Images != 100 {
		t.Errorf("Evaluate: top-1 %v loss %v on %d images; the run: %v, %v", ev.Top1, ev.Loss, ev.Images, r.Top1, r.Loss)
	}
	x, labels, err := Images(r.Config, 5, meta.Mean, meta.Std)
	if err != nil || len(labels) != 5 || len(x) != 5*28*28 {
		t.Errorf("Images: %d values, %d labels, %v", len(x), len(labels), err)
	}
	again, err := e.Train(cfgPath, b.Overrides(dir, "train.batch_size=32")...)
	if err != nil {
		t.Fatal(err)
	}
	if !again.ReadBack || again.Top1 != r.Top1 || again.Steps != r.Steps {
		t.Errorf("second run: read back %v, top-1 %v, steps %d", again.ReadBack, again.Top1, again.Steps)
	}
}

// TestTrainNonFinite: a run that train.Run stops with a NonFiniteError is
// a result (NonFinite, with its step), not an error.
func TestTrainNonFinite(t *testing.T) {
	if testing.Short() {
		t.Skip("trains")
	}
	e := &Env{Log: logrus.New()}
	e.Log.SetOutput(io.Discard)
	b := Budget{LimitTrain: 64, LimitVal: 32, Epochs: 1, MaxSteps: 2}
	r, err := e.Train("../../../configs/mnist_vit_tiny.yaml",
		b.Overrides(t.TempDir(), "train.batch_size=32", "optim.lr=1e38", "optim.warmup_epochs=0", "optim.clip_grad=0")...)
	if err != nil {
		t.Fatal(err)
	}
	if !r.NonFinite {
		t.Errorf("lr 1e38: run not marked non-finite (top-1 %v)", r.Top1)
	}
}

// TestRunResult: the child's environment gets the extra variables, the last
// result line is decoded, the peak RSS read, and a failing child is an error.
func TestRunResult(t *testing.T) {
	var v struct{ A int }
	rss, err := RunResult(exec.Command("sh", "-c", `echo 'RESULT {"A":1}'; echo noise; echo "RESULT {\"A\":$X}"`), ResultPrefix, &v, "X=7")
	if err != nil || v.A != 7 || rss <= 0 {
		t.Errorf("RunResult: A=%d, rss %d KiB, %v; want A=7, rss > 0", v.A, rss, err)
	}
	if _, err := RunResult(exec.Command("sh", "-c", "exit 3"), ResultPrefix, &v); err == nil {
		t.Error("a failing child: no error")
	}
}

// TestArgmax: the first largest value wins, as torch.argmax.
func TestArgmax(t *testing.T) {
	for _, c := range []struct {
		z    []float32
		want int
	}{
		{[]float32{0}, 0},
		{[]float32{1, 3, 2}, 1},
		{[]float32{-1, -3, -0.5}, 2},
		{[]float32{2, 5, 5, 1}, 1},
	} {
		if got := Argmax(c.z); got != c.want {
			t.Errorf("Argmax(%v) = %d, want %d", c.z, got, c.want)
		}
	}
}
