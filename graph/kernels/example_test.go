package kernels_test

import (
	"fmt"

	"github.com/vitgo/vit/graph/kernels"
)

// A linear layer's forward pass: Y = X·Wᵀ + b with W stored (out, in) as in
// PyTorch, so op(B) = Wᵀ is selected with transB.
func ExampleSgemm() {
	x := []float32{ // 2×3
		1, 2, 3,
		4, 5, 6,
	}
	w := []float32{ // 2×3: out = 2, in = 3
		1, 0, -1,
		0.5, 0.5, 0.5,
	}
	y := make([]float32, 2*2)
	kernels.Sgemm(false, true, 2, 2, 3, 1, x, 3, w, 3, 0, y, 2)
	kernels.AddBias(y, []float32{10, 20}, 2, 2)
	fmt.Println(y)
	// Output: [8 23 8 27.5]
}

// Attention scores for two heads at once: S_h = Q_h·K_hᵀ/√d.
func ExampleSoftmaxRows() {
	x := []float32{0, 0, 1e9, 2, 2, 2}
	kernels.SoftmaxRows(x, 2, 3)
	fmt.Printf("%.3f\n", x)
	// Output: [0.000 0.000 1.000 0.333 0.333 0.333]
}

func ExampleGELU() {
	x := []float32{-3, -1, 0, 1, 3}
	y := make([]float32, len(x))
	kernels.GELU(y, x)
	fmt.Printf("%.5f\n", y)
	// Output: [-0.00405 -0.15866 0.00000 0.84134 2.99595]
}

func ExampleLayerNormRows() {
	x := []float32{1, 2, 3, 4}
	y := make([]float32, 4)
	mean, rstd := make([]float32, 1), make([]float32, 1)
	kernels.LayerNormRows(y, mean, rstd, x, nil, nil, 1, 4, 0)
	fmt.Printf("y=%.4f mean=%.1f rstd=%.4f\n", y, mean[0], rstd[0])
	// Output: y=[-1.3416 -0.4472 0.4472 1.3416] mean=2.5 rstd=0.8944
}
