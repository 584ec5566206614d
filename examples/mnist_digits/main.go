// Command mnist_digits writes MNIST test digits as PNG files, pictures to
// try `cmd/eval -images` on:
//
//	go run ./examples/mnist_digits -n 20 -out /tmp/digits
//	go run ./cmd/eval -checkpoint runs/mnist_vit_tiny/best.safetensors -images /tmp/digits -topk 3
//
// File i is named NN_label_L.png after its position and true label, so the
// answers can be checked by eye.
package main

import (
	"flag"
	"fmt"
	"image"
	"image/png"
	"log"
	"os"
	"path/filepath"

	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/internal/regfile"
)

func main() {
	n := flag.Int("n", 20, "digits to write (the first n of the 10k test images)")
	start := flag.Int("start", 0, "index of the first digit")
	out := flag.String("out", "digits", "output directory")
	flag.Parse()
	cfg := data.DefaultConfig()
	cfg.Name = data.NameMNIST
	ds, err := data.Open(cfg, data.Val, 1)
	if err != nil {
		log.Fatal(err)
	}
	if *n <= 0 || *start < 0 || *start+*n > ds.Len() {
		log.Fatalf("mnist_digits: -start %d -n %d outside the %d test images", *start, *n, ds.Len())
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	for i := *start; i < *start+*n; i++ {
		im, label, err := ds.Item(i)
		if err != nil {
			log.Fatal(err)
		}
		g := image.NewGray(image.Rect(0, 0, im.W, im.H))
		copy(g.Pix, im.Pix)
		path := filepath.Join(*out, fmt.Sprintf("%02d_label_%d.png", i-*start, label))
		f, _, err := regfile.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644) // -out is the user's: refuse a FIFO there
		if err != nil {
			log.Fatal(err)
		}
		if err := png.Encode(f, g); err != nil {
			log.Fatal(err)
		}
		if err := f.Close(); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Printf("wrote %d digits to %s\n", *n, *out)
}
