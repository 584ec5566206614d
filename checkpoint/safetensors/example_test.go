package safetensors_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/vitgo/vit/checkpoint/safetensors"
)

// Save two named tensors with metadata, then load them back.
func Example() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "last.safetensors")

	tensors := []safetensors.Tensor{
		safetensors.FromFloat32("head.weight", []int{2, 3}, []float32{1, 2, 3, 4, 5, 6}),
		safetensors.FromFloat32("head.bias", []int{2}, []float32{0.5, -0.5}),
	}
	if err := safetensors.Write(path, tensors, map[string]string{"step": "1000"}); err != nil {
		fmt.Println(err)
		return
	}

	f, err := safetensors.ReadFile(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("step:", f.Metadata["step"])
	fmt.Println("names:", f.Names())
	w, _ := f.Get("head.weight")
	v, err := w.Float32()
	fmt.Println(w.DType, w.Shape, v, err)
	// Output:
	// step: 1000
	// names: [head.bias head.weight]
	// F32 [2 3] [1 2 3 4 5 6] <nil>
}
