package train

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/vitgo/vit/checkpoint/safetensors"
	"github.com/vitgo/vit/graph/kernels"
	"github.com/vitgo/vit/internal/testmodel"
)

var updateTestModel = flag.Bool("update-testmodel", false, "rewrite "+testmodel.File+" from a fresh training run")

// TestTestModelFixture: the checkpoint that serving's tests classify with
// (internal/testmodel, committed so that they need no trainer) is what this
// trainer makes of testmodel.Config on testmodel.WriteData's images, every
// tensor bit for bit (the kernel-bits contract makes the run the same on
// every CPU), with the same metadata. -update-testmodel rewrites it.
func TestTestModelFixture(t *testing.T) {
	if testing.Short() {
		t.Skip("trains the fixture")
	}
	if !strings.HasPrefix(kernels.Backend(), "native") {
		t.Skip("the fixture holds the native SGEMM's bits; " + kernels.Backend() + " sums in its own order")
	}
	dir := t.TempDir()
	root, out := filepath.Join(dir, "data"), filepath.Join(dir, "run")
	if err := testmodel.WriteData(root); err != nil {
		t.Fatal(err)
	}
	cfg, err := ParseConfig([]byte(testmodel.Config), []string{"data.root=" + root, "train.out_dir=" + out})
	if err != nil {
		t.Fatal(err)
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	if _, err := Run(context.Background(), cfg, Options{Log: log}); err != nil {
		t.Fatal(err)
	}
	fresh, err := os.ReadFile(filepath.Join(out, LastModel))
	if err != nil {
		t.Fatal(err)
	}
	if *updateTestModel {
		if err := os.WriteFile(filepath.Join("..", testmodel.File), fresh, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	decode := func(b []byte) *safetensors.File {
		f, err := safetensors.Decode(bytes.NewReader(b), int64(len(b)), "model")
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	got, want := decode(fresh), decode(testmodel.Bytes())
	if len(got.Tensors) != len(want.Tensors) {
		t.Fatalf("trained %d tensors, the fixture holds %d", len(got.Tensors), len(want.Tensors))
	}
	for _, w := range want.Tensors {
		g, ok := got.Get(w.Name)
		if !ok || g.DType != w.DType || !slices.Equal(g.Shape, w.Shape) || !bytes.Equal(g.Data, w.Data) {
			t.Errorf("%s: the fixture's tensor is not the trainer's (rerun with -update-testmodel if the training changed on purpose)", w.Name)
		}
	}
	for k, v := range want.Metadata {
		if got.Metadata[k] != v {
			t.Errorf("metadata %s: trained %q, the fixture %q", k, got.Metadata[k], v)
		}
	}
}
