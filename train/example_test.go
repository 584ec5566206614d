package train_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/sirupsen/logrus"

	"github.com/vitgo/vit/train"
)

// ExampleRun trains a one-block ViT for two epochs on 256 MNIST images and
// validates it on 64: four steps an epoch, a checkpoint and the run's
// records in out_dir.
func ExampleRun() {
	out, err := os.MkdirTemp("", "vit-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(out)
	cfg, err := train.ParseConfig([]byte(`
model: {img_size: 28, patch_size: 7, in_chans: 1, embed_dim: 16, depth: 1, num_heads: 2, mlp_ratio: 2, num_classes: 10}
data: {limit_train: 256, limit_val: 64}
train: {epochs: 2, batch_size: 64}
`), []string{"train.out_dir=" + out})
	if err != nil {
		fmt.Println(err)
		return
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	res, err := train.Run(context.Background(), cfg, train.Options{Log: log})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("steps:", res.Steps, "epochs:", res.Epochs, "validation images:", res.Last.Images)
	for _, f := range []string{train.LastModel, train.LastState, train.MetricsFile, train.CurvesFile} {
		_, err := os.Stat(filepath.Join(out, f))
		fmt.Printf("%s written: %v\n", f, err == nil)
	}
	// Output:
	// steps: 8 epochs: 2 validation images: 64
	// last.safetensors written: true
	// last.train.safetensors written: true
	// metrics.csv written: true
	// curves.png written: true
}
