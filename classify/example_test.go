package classify_test

import (
	"context"
	"fmt"
	"image"
	"log"
	"os"

	"github.com/vitgo/vit/classify"
	"github.com/vitgo/vit/internal/testmodel"
)

// Load a tiny colour classifier (trained for 60 steps on 16×16 images), then
// ask it about two new pictures of sizes it never saw.
func Example() {
	dir, err := os.MkdirTemp("", "classify-example-*")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ckpt, err := testmodel.Checkpoint(dir) // dir/run/last.safetensors
	if err != nil {
		log.Fatal(err)
	}

	c, err := classify.Load(ckpt, classify.Options{TopK: 2, PoolSize: 2})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	fmt.Println("classes:", c.Classes())

	imgs := []image.Image{testmodel.Colour(2, 40, 30, 5), testmodel.Colour(0, 9, 11, 6)}
	preds, err := c.Classify(context.Background(), imgs)
	if err != nil {
		log.Fatal(err)
	}
	for i, p := range preds {
		fmt.Printf("image %d: %s, probability above 0.5: %v\n", i, p[0].Label, p[0].Prob > 0.5)
	}
	// Output:
	// classes: [blue green red]
	// image 0: red, probability above 0.5: true
	// image 1: blue, probability above 0.5: true
}
