package layers_test

import (
	"fmt"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/layers"
)

// A small ViT: its parameters carry timm's names and shapes, and Build
// makes a forward graph from images to logits for a fixed batch size.
func ExampleNew() {
	c := layers.Presets["vit_tiny_patch16_224"]
	c.ImgSize, c.PatchSize, c.Depth, c.NumClasses = layers.Size2{32, 32}, 8, 2, 10
	m, err := layers.New(c, tensor.Float32, 1)
	if err != nil {
		panic(err)
	}
	fmt.Println("parameters:", m.NumParams())
	for _, p := range m.Params[:6] {
		fmt.Println(p.Name, p.Shape)
	}
	fmt.Println("…", len(m.Params), "tensors, the last", m.Params[len(m.Params)-1].Name)

	g, err := m.Build(4, layers.BuildOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println("input", g.Input.Shape(), "→ logits", g.Logits.Shape())
	// Output:
	// parameters: 932554
	// cls_token (1, 1, 192)
	// pos_embed (1, 17, 192)
	// patch_embed.proj.weight (192, 3, 8, 8)
	// patch_embed.proj.bias (192)
	// blocks.0.norm1.weight (192)
	// blocks.0.norm1.bias (192)
	// … 32 tensors, the last head.bias
	// input (4, 3, 32, 32) → logits (4, 10)
}
