package optim_test

import (
	"fmt"

	"github.com/vitgo/vit/optim"
)

// One training step's optimizer work: the schedule's learning rate, gradient
// clipping, the AdamW update with layer decay, and the EMA.
func Example() {
	cfg := optim.DefaultConfig()
	cfg.LayerDecay = 0.5
	cfg.EMA = true

	// Two tensors of a depth-1 ViT, whose layer ids run from 0 (embeddings)
	// to 2 (head); Value would alias the model's weights.
	params := []optim.Param{
		{Name: "blocks.0.mlp.fc1.weight", Shape: []int{1, 2}, Value: []float32{0.5, -0.5}, Grad: []float32{3, -4}, LayerID: 1},
		{Name: "head.bias", Shape: []int{1}, Value: []float32{0.1}, Grad: []float32{0}, LayerID: 2},
	}
	opt, err := optim.NewAdamW(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	ema, err := optim.NewEMA(cfg.EMADecay, cfg.EMAWarmup, params)
	if err != nil {
		fmt.Println(err)
		return
	}
	sched := cfg.Schedule()
	const stepsPerEpoch, totalSteps = 10, 100

	lr := sched.LR(10, stepsPerEpoch, totalSteps) // step 10: warmup (1 epoch) just over
	norm := optim.ClipGradNorm(params, cfg.ClipGrad.Value())
	if name, ok := optim.GradsFinite(params); !ok {
		fmt.Println("skip step: bad gradient in", name)
		return
	}
	if err := opt.Step(params, lr); err != nil {
		fmt.Println(err)
		return
	}
	if err := ema.Update(params, opt.Steps()); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("lr %.4g, grad norm %.4g, clipped grads %.4f\n", lr, norm, params[0].Grad)
	fmt.Printf("fc1 lr scale %.2f, weights %.7f\n", opt.Groups(params)[0].LRScale, params[0].Value)
	fmt.Printf("EMA %.7f\n", ema.Weights()["blocks.0.mlp.fc1.weight"])
	// fc1 has lr 0.001·0.5: w = 0.5·(1 − 5e-4·0.05) − 5e-4·0.6/(0.6+1e-8) = 0.4994875.
	// The first EMA update copies the weights (timm ModelEmaV3).

	// Output:
	// lr 0.001, grad norm 5, clipped grads [0.6000 -0.8000]
	// fc1 lr scale 0.50, weights [0.4994875 -0.4994875]
	// EMA [0.4994875 -0.4994875]
}

// The optimizer table: optim.opt names a row, New builds it, and every
// optimizer steps, saves and restores through the one interface. The state
// is optimizer-neutral: a step count and named slots of per-parameter
// buffers.
func ExampleOptimizer() {
	for _, name := range []optim.OptName{optim.OptAdamW, optim.OptSGD, optim.OptMomentum, optim.OptLamb} {
		var opt optim.Optimizer
		opt, err := optim.New(optim.Config{Opt: name, LR: 0.1})
		if err != nil {
			fmt.Println(err)
			return
		}
		params := []optim.Param{{Name: "head.weight", Shape: []int{1, 2}, Value: []float32{0.5, -0.5}, Grad: []float32{0.3, -0.4}}}
		if err := opt.Step(params, 0.1); err != nil {
			fmt.Println(err)
			return
		}
		st := opt.SaveState()
		fresh, _ := optim.New(optim.Config{Opt: name})
		if err := fresh.RestoreState(st); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%-8s %-12T slots %-25s steps %d, weights %.5f\n", name, opt, fmt.Sprintf("%q", opt.Slots()), fresh.Steps(), params[0].Value)
	}
	// SGD: d = g + wd·w = 0.325, Nesterov d + 0.9·d, w − 0.1·d = 0.43825.
	// Lamb: the trust ratio makes the step lr·‖w‖ long: 0.5 − 0.05.

	// Output:
	// adamw    *optim.AdamW slots ["m" "v"]                 steps 1, weights [0.39750 -0.39750]
	// sgd      *optim.SGD   slots ["momentum_buffer"]       steps 1, weights [0.43825 -0.41925]
	// momentum *optim.SGD   slots ["momentum_buffer"]       steps 1, weights [0.46750 -0.45750]
	// lamb     *optim.Lamb  slots ["exp_avg" "exp_avg_sq"]  steps 1, weights [0.45000 -0.45000]
}
