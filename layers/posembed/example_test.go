package posembed_test

import (
	"fmt"

	"github.com/vitgo/vit/layers/posembed"
)

// A CLS row plus a 2×2 grid of one channel, enlarged to 3×3 with PyTorch's
// bicubic kernel (the same numbers as F.interpolate(x, size=(3, 3),
// mode="bicubic", align_corners=False)); the CLS row is kept as it is.
func ExampleResample() {
	pe := []float32{
		9,    // CLS
		0, 1, // grid row 0
		2, 3, // grid row 1
	}
	out, err := posembed.Resample(pe, 1, 1, 2, 2, 3, 3, posembed.Options{Mode: posembed.Bicubic})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("cls:", out[0])
	for r := range 3 {
		fmt.Printf("%.4f\n", out[1+3*r:1+3*r+3])
	}
	// Output:
	// cls: 9
	// [-0.2604 0.3264 0.9132]
	// [0.9132 1.5000 2.0868]
	// [2.0868 2.6736 3.2604]
}
