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
