package train

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/memest"
)

// TestEstimatesPinned pins the memory estimate of every configs/*.yaml,
// and of the golden config with each setting the estimate reads, for
// training and for evaluation alone, byte for byte: moving the estimate's
// parts to their owners (data, layers, optim) must change no number.
// threads, data.workers and data.max_pixels are set so that no number
// depends on the machine's cores or memory.
func TestEstimatesPinned(t *testing.T) {
	files, err := filepath.Glob("../configs/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no configs: %v", err)
	}
	fixed := []string{"train.threads=2", "data.workers=2", "data.max_pixels=1000000"}
	type run struct{ name, file string }
	var runs []run
	for _, f := range files {
		runs = append(runs, run{filepath.Base(f), f})
	}
	golden := "../configs/mnist_vit_tiny_p4.yaml"
	variants := [][]string{
		{"train.precision=bf16"},
		{"train.precision=bf16", "train.recompute=mlp"},
		{"train.precision=bf16", "train.recompute=block"},
		{"train.precision=bf16", "model.dropout=0.1"},
		{"model.dropout=0.1", "model.drop_path_rate=0.1"},
		{"train.grad_accum_steps=4"},
		{"optim.ema=true"},
		{"finetune.linear_probe=true"},
		{"train.eval_batch_size=1000", "data.prefetch=8"},
		{"data.name=folder", "data.root=/nonexistent"},
		{"data.name=cifar10", "data.root=/nonexistent", "model.in_chans=3"},
	}
	for _, v := range variants {
		runs = append(runs, run{"p4 " + strings.Join(v, " "), golden})
	}
	var got []string
	for _, r := range runs {
		var over []string
		if strings.HasPrefix(r.name, "p4 ") {
			over = strings.Fields(strings.TrimPrefix(r.name, "p4 "))
		}
		cfg, err := LoadConfig(r.file, append(over, fixed...))
		if err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		got = append(got, fmt.Sprintf("%s train %+v", r.name, EstimateMemory(cfg)))
		got = append(got, fmt.Sprintf("%s eval %+v", r.name, EstimateEvalMemory(cfg)))
	}
	// A distillation teacher (its architecture read from the file).
	cfg, err := LoadConfig(golden, fixed)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Distill.Type = DistillHard
	tc := cfg
	tc.Model.PatchSize = 7 // the teacher is 14×14
	cfg.Distill.Teacher = writeTeacher(t, tc)
	got = append(got, fmt.Sprintf("p4 teacher train %+v", EstimateMemory(cfg)))
	// Loading a checkpoint (checkpoint.LoadModel's check, at two threads;
	// classify's lanes are pinned in estimate_lanes_test.go).
	for _, f := range files {
		c, err := LoadConfig(f, fixed)
		if err != nil {
			t.Fatal(err)
		}
		load := memest.Of(memest.Spec{Model: c.Model.WithDefaults(), Data: data.DefaultConfig(), EvalBatch: 1, Threads: 2})
		got = append(got, fmt.Sprintf("%s load %+v", filepath.Base(f), load))
	}
	if os.Getenv("PIN_PRINT") != "" {
		for _, g := range got {
			fmt.Printf("%q,\n", g)
		}
		return
	}
	if len(got) != len(pinnedEstimates) {
		t.Fatalf("%d estimates, %d pinned", len(got), len(pinnedEstimates))
	}
	for i := range got {
		if got[i] != pinnedEstimates[i] {
			t.Errorf("estimate changed:\n got %s\nwant %s", got[i], pinnedEstimates[i])
		}
	}
}

// pinnedEstimates are the estimates before their parts moved to their owners.
var pinnedEstimates = []string{
	"cifar10_vit_small.yaml train {Params:10774312 Grads:10774312 Optimizer:21548624 EMA:0 TrainAct:750815247 EvalAct:31933448 Attention:12880920 Data:184800000 Prefetch:18935808 Decode:0 Save:21548624 Teacher:0 Runtime:25165824 Peak:1076296200}",
	"cifar10_vit_small.yaml eval {Params:10774312 Grads:0 Optimizer:0 EMA:0 TrainAct:0 EvalAct:159728648 Attention:12813320 Data:184800000 Prefetch:9467904 Decode:0 Save:0 Teacher:0 Runtime:25165824 Peak:389936688}",
	"fashion_mnist_deit_tiny_distilled.yaml train {Params:1223248 Grads:1223248 Optimizer:2446496 EMA:0 TrainAct:179826524 EvalAct:8343880 Attention:3404760 Data:55440000 Prefetch:4878336 Decode:0 Save:2446496 Teacher:0 Runtime:25165824 Peak:280994052}",
	"fashion_mnist_deit_tiny_distilled.yaml eval {Params:1223248 Grads:0 Optimizer:0 EMA:0 TrainAct:0 EvalAct:41767240 Attention:3363144 Data:55440000 Prefetch:2439168 Decode:0 Save:0 Teacher:0 Runtime:25165824 Peak:126035480}",
	"fashion_mnist_vit_teacher.yaml train {Params:2714920 Grads:2714920 Optimizer:5429840 EMA:0 TrainAct:264051775 EvalAct:11882016 Attention:4975200 Data:55440000 Prefetch:4878336 Decode:0 Save:5429840 Teacher:0 Runtime:25165824 Peak:377707472}",
	"fashion_mnist_vit_teacher.yaml eval {Params:2714920 Grads:0 Optimizer:0 EMA:0 TrainAct:0 EvalAct:61034016 Attention:4935200 Data:55440000 Prefetch:2439168 Decode:0 Save:0 Teacher:0 Runtime:25165824 Peak:146793928}",
	"fashion_mnist_vit_tiny.yaml train {Params:1220136 Grads:1220136 Optimizer:2440272 EMA:0 TrainAct:176315456 EvalAct:8195616 Attention:3336800 Data:55440000 Prefetch:4878336 Decode:0 Save:2440272 Teacher:0 Runtime:25165824 Peak:277316048}",
	"fashion_mnist_vit_tiny.yaml eval {Params:1220136 Grads:0 Optimizer:0 EMA:0 TrainAct:0 EvalAct:40963616 Attention:3296800 Data:55440000 Prefetch:2439168 Decode:0 Save:0 Teacher:0 Runtime:25165824 Peak:125228744}",
	"mnist_finetune_56.yaml train {Params:861480 Grads:861480 Optimizer:1722960 EMA:0 TrainAct:298524662 EvalAct:45481160 Attention:13842008 Data:55440000 Prefetch:14496768 Decode:0 Save:1722960 Teacher:0 Runtime:25165824 Peak:444277294}",
	"mnist_finetune_56.yaml eval {Params:861480 Grads:0 Optimizer:0 EMA:0 TrainAct:0 EvalAct:110034120 Attention:13221064 Data:55440000 Prefetch:9664512 Decode:0 Save:0 Teacher:0 Runtime:25165824 Peak:201165936}",
	"mnist_vit_tiny.yaml train {Params:823848 Grads:823848 Optimizer:1647696 EMA:0 TrainAct:51945180 EvalAct:3311880 Attention:1121048 Data:55440000 Prefetch:4878336 Decode:0 Save:1647696 Teacher:0 Runtime:25165824 Peak:145684308}",
	"mnist_vit_tiny.yaml eval {Params:823848 Grads:0 Optimizer:0 EMA:0 TrainAct:0 EvalAct:9996552 Attention:1116424 Data:55440000 Prefetch:2439168 Decode:0 Save:0 Teacher:0 Runtime:25165824 Peak:93865392}",
	"mnist_vit_tiny_p4.yaml train {Params:823848 Grads:823848 Optimizer:1647696 EMA:0 TrainAct:151247935 EvalAct:8195616 Attention:3336800 Data:55440000 Prefetch:4878336 Decode:0 Save:1647696 Teacher:0 Runtime:25165824 Peak:249870799}",
	"mnist_vit_tiny_p4.yaml eval {Params:823848 Grads:0 Optimizer:0 EMA:0 TrainAct:0 EvalAct:27856416 Attention:3296800 Data:55440000 Prefetch:2439168 Decode:0 Save:0 Teacher:0 Runtime:25165824 Peak:111725256}",
	"vit_base_patch16_224.yaml train {Params:346270624 Grads:346270624 Optimizer:692541248 EMA:0 TrainAct:8199744707 EvalAct:251673800 Attention:78394968 Data:0 Prefetch:465494016 Decode:14000000 Save:692541248 Teacher:0 Runtime:25165824 Peak:11033702091}",
	"vit_base_patch16_224.yaml eval {Params:346270624 Grads:0 Optimizer:0 EMA:0 TrainAct:0 EvalAct:1026309320 Attention:77774024 Data:0 Prefetch:232747008 Decode:14000000 Save:0 Teacher:0 Runtime:25165824 Peak:1644492776}",
	"vit_tiny_patch16_224.yaml train {Params:22869664 Grads:22869664 Optimizer:45739328 EMA:0 TrainAct:2108204636 EvalAct:120954056 Attention:20297304 Data:0 Prefetch:465494016 Decode:14000000 Save:45739328 Teacher:0 Runtime:25165824 Peak:2871036516}",
	"vit_tiny_patch16_224.yaml eval {Params:22869664 Grads:0 Optimizer:0 EMA:0 TrainAct:0 EvalAct:314612936 Attention:19676360 Data:0 Prefetch:232747008 Decode:14000000 Save:0 Teacher:0 Runtime:25165824 Peak:609395432}",
	"p4 train.precision=bf16 train {Params:823848 Grads:823848 Optimizer:1647696 EMA:0 TrainAct:99146815 EvalAct:8195616 Attention:3336800 Data:55440000 Prefetch:4878336 Decode:0 Save:1647696 Teacher:0 Runtime:25165824 Peak:197769680}",
	"p4 train.precision=bf16 eval {Params:823848 Grads:0 Optimizer:0 EMA:0 TrainAct:0 EvalAct:27856416 Attention:3296800 Data:55440000 Prefetch:2439168 Decode:0 Save:0 Teacher:0 Runtime:25165824 Peak:111725256}",
	"p4 train.precision=bf16 train.recompute=mlp train {Params:823848 Grads:823848 Optimizer:1647696 EMA:0 TrainAct:81058880 EvalAct:8195616 Attention:3336800 Data:55440000 Prefetch:4878336 Decode:0 Save:1647696 Teacher:0 Runtime:25165824 Peak:179681744}",
	"p4 train.precision=bf16 train.recompute=mlp eval {Params:823848 Grads:0 Optimizer:0 EMA:0 TrainAct:0 EvalAct:27856416 Attention:3296800 Data:55440000 Prefetch:2439168 Decode:0 Save:0 Teacher:0 Runtime:25165824 Peak:111725256}",
	"p4 train.precision=bf16 train.recompute=block train {Params:823848 Grads:823848 Optimizer:1647696 EMA:0 TrainAct:46652479 EvalAct:8195616 Attention:3336800 Data:55440000 Prefetch:4878336 Decode:0 Save:1647696 Teacher:0 Runtime:25165824 Peak:145275344}",
	"p4 train.precision=bf16 train.recompute=block eval {Params:823848 Grads:0 Optimizer:0 EMA:0 TrainAct:0 EvalAct:27856416 Attention:3296800 Data:55440000 Prefetch:2439168 Decode:0 Save:0 Teacher:0 Runtime:25165824 Peak:111725256}",
	"p4 train.precision=bf16 model.dropout=0.1 train {Params:823848 Grads:823848 Optimizer:1647696 EMA:0 TrainAct:170581056 EvalAct:8195616 Attention:3336800 Data:55440000 Prefetch:4878336 Decode:0 Save:1647696 Teacher:0 Runtime:25165824 Peak:269203920}",
	"p4 train.precision=bf16 model.dropout=0.1 eval {Params:823848 Grads:0 Optimizer:0 EMA:0 TrainAct:0 EvalAct:27856416 Attention:3296800 Data:55440000 Prefetch:2439168 Decode:0 Save:0 Teacher:0 Runtime:25165824 Peak:111725256}",
	"p4 model.dropout=0.1 model.drop_path_rate=0.1 train {Params:823848 Grads:823848 Optimizer:1647696 EMA:0 TrainAct:202038335 EvalAct:8195616 Attention:3336800 Data:55440000 Prefetch:4878336 Decode:0 Save:1647696 Teacher:0 Runtime:25165824 Peak:300661200}",
	"p4 model.dropout=0.1 model.drop_path_rate=0.1 eval {Params:823848 Grads:0 Optimizer:0 EMA:0 TrainAct:0 EvalAct:27856416 Attention:3296800 Data:55440000 Prefetch:2439168 Decode:0 Save:0 Teacher:0 Runtime:25165824 Peak:111725256}",
	"p4 train.grad_accum_steps=4 train {Params:823848 Grads:823848 Optimizer:1647696 EMA:0 TrainAct:37841983 EvalAct:13110816 Attention:3336800 Data:55440000 Prefetch:4878336 Decode:0 Save:1647696 Teacher:0 Runtime:25165824 Peak:141380048}",
	"p4 train.grad_accum_steps=4 eval {Params:823848 Grads:0 Optimizer:0 EMA:0 TrainAct:0 EvalAct:27856416 Attention:3296800 Data:55440000 Prefetch:2439168 Decode:0 Save:0 Teacher:0 Runtime:25165824 Peak:111725256}",
	"p4 optim.ema=true train {Params:823848 Grads:823848 Optimizer:1647696 EMA:823848 TrainAct:151247935 EvalAct:8195616 Attention:3336800 Data:55440000 Prefetch:4878336 Decode:0 Save:2471544 Teacher:0 Runtime:25165824 Peak:251518495}",
	"p4 optim.ema=true eval {Params:823848 Grads:0 Optimizer:0 EMA:0 TrainAct:0 EvalAct:27856416 Attention:3296800 Data:55440000 Prefetch:2439168 Decode:0 Save:0 Teacher:0 Runtime:25165824 Peak:111725256}",
	"p4 finetune.linear_probe=true train {Params:823848 Grads:2600 Optimizer:5200 EMA:0 TrainAct:151247935 EvalAct:8195616 Attention:3336800 Data:55440000 Prefetch:4878336 Decode:0 Save:5200 Teacher:0 Runtime:25165824 Peak:245764559}",
	"p4 finetune.linear_probe=true eval {Params:823848 Grads:0 Optimizer:0 EMA:0 TrainAct:0 EvalAct:27856416 Attention:3296800 Data:55440000 Prefetch:2439168 Decode:0 Save:0 Teacher:0 Runtime:25165824 Peak:111725256}",
	"p4 train.eval_batch_size=1000 data.prefetch=8 train {Params:823848 Grads:823848 Optimizer:1647696 EMA:0 TrainAct:151247935 EvalAct:108538400 Attention:25660000 Data:55440000 Prefetch:35825280 Decode:0 Save:1647696 Teacher:0 Runtime:25165824 Peak:381160528}",
	"p4 train.eval_batch_size=1000 data.prefetch=8 eval {Params:823848 Grads:0 Optimizer:0 EMA:0 TrainAct:0 EvalAct:217492000 Attention:25620000 Data:55440000 Prefetch:31760000 Decode:0 Save:0 Teacher:0 Runtime:25165824 Peak:330681672}",
	"p4 data.name=folder data.root=/nonexistent train {Params:823848 Grads:823848 Optimizer:1647696 EMA:0 TrainAct:151247935 EvalAct:8195616 Attention:3336800 Data:0 Prefetch:4878336 Decode:14000000 Save:1647696 Teacher:0 Runtime:25165824 Peak:208430799}",
	"p4 data.name=folder data.root=/nonexistent eval {Params:823848 Grads:0 Optimizer:0 EMA:0 TrainAct:0 EvalAct:27856416 Attention:3296800 Data:0 Prefetch:2439168 Decode:14000000 Save:0 Teacher:0 Runtime:25165824 Peak:70285256}",
	"p4 data.name=cifar10 data.root=/nonexistent model.in_chans=3 train {Params:832040 Grads:832040 Optimizer:1664080 EMA:0 TrainAct:152853567 EvalAct:9801248 Attention:3336800 Data:184800000 Prefetch:14512128 Decode:0 Save:1664080 Teacher:0 Runtime:25165824 Peak:392125008}",
	"p4 data.name=cifar10 data.root=/nonexistent model.in_chans=3 eval {Params:832040 Grads:0 Optimizer:0 EMA:0 TrainAct:0 EvalAct:29462048 Attention:3296800 Data:184800000 Prefetch:7256064 Decode:0 Save:0 Teacher:0 Runtime:25165824 Peak:247515976}",
	"p4 teacher train {Params:823848 Grads:823848 Optimizer:1647696 EMA:0 TrainAct:151247935 EvalAct:8195616 Attention:3336800 Data:55440000 Prefetch:4878336 Decode:0 Save:1647696 Teacher:2451224 Runtime:25165824 Peak:252322023}",
	"cifar10_vit_small.yaml load {Params:10774312 Grads:0 Optimizer:0 EMA:0 TrainAct:0 EvalAct:1281416 Attention:133640 Data:55440000 Prefetch:73968 Decode:0 Save:0 Teacher:0 Runtime:25165824 Peak:92735520}",
	"fashion_mnist_deit_tiny_distilled.yaml load {Params:1223248 Grads:0 Optimizer:0 EMA:0 TrainAct:0 EvalAct:346952 Attention:46920 Data:55440000 Prefetch:19056 Decode:0 Save:0 Teacher:0 Runtime:25165824 Peak:82195080}",
	"fashion_mnist_vit_teacher.yaml load {Params:2714920 Grads:0 Optimizer:0 EMA:0 TrainAct:0 EvalAct:496672 Attention:58400 Data:55440000 Prefetch:19056 Decode:0 Save:0 Teacher:0 Runtime:25165824 Peak:83836472}",
	"fashion_mnist_vit_tiny.yaml load {Params:1220136 Grads:0 Optimizer:0 EMA:0 TrainAct:0 EvalAct:339872 Attention:45600 Data:55440000 Prefetch:19056 Decode:0 Save:0 Teacher:0 Runtime:25165824 Peak:82184888}",
	"mnist_finetune_56.yaml load {Params:861480 Grads:0 Optimizer:0 EMA:0 TrainAct:0 EvalAct:1167688 Attention:411336 Data:55440000 Prefetch:75504 Decode:0 Save:0 Teacher:0 Runtime:25165824 Peak:82710496}",
	"mnist_vit_tiny.yaml load {Params:823848 Grads:0 Optimizer:0 EMA:0 TrainAct:0 EvalAct:80392 Attention:11016 Data:55440000 Prefetch:19056 Decode:0 Save:0 Teacher:0 Runtime:25165824 Peak:81529120}",
	"mnist_vit_tiny_p4.yaml load {Params:823848 Grads:0 Optimizer:0 EMA:0 TrainAct:0 EvalAct:237472 Attention:45600 Data:55440000 Prefetch:19056 Decode:0 Save:0 Teacher:0 Runtime:25165824 Peak:81686200}",
	"vit_base_patch16_224.yaml load {Params:346270624 Grads:0 Optimizer:0 EMA:0 TrainAct:0 EvalAct:16341704 Attention:1520840 Data:55440000 Prefetch:3636672 Decode:0 Save:0 Teacher:0 Runtime:25165824 Peak:446854824}",
	"vit_tiny_patch16_224.yaml load {Params:22869664 Grads:0 Optimizer:0 EMA:0 TrainAct:0 EvalAct:5221448 Attention:613064 Data:55440000 Prefetch:3636672 Decode:0 Save:0 Teacher:0 Runtime:25165824 Peak:112333608}",
}

// TestEstimateReadsOptimizer: the estimate counts the state of the
// optimizer optim.opt names: SGD's one buffer per trained weight is half
// AdamW's two moments.
func TestEstimateReadsOptimizer(t *testing.T) {
	opt := map[string]int64{}
	for _, name := range []string{"adamw", "sgd"} {
		cfg, err := LoadConfig("../configs/mnist_vit_tiny.yaml", []string{"optim.opt=" + name})
		if err != nil {
			t.Fatal(err)
		}
		opt[name] = EstimateMemory(cfg).Optimizer
	}
	if opt["adamw"] == 0 || opt["sgd"]*2 != opt["adamw"] {
		t.Errorf("optimizer state: adamw %d bytes, sgd %d; want sgd half of adamw", opt["adamw"], opt["sgd"])
	}
}
