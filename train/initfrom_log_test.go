package train

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/vitgo/vit/checkpoint"
	"github.com/vitgo/vit/checkpoint/safetensors"
	"github.com/vitgo/vit/layers"
)

// TestInitFromLogsWhatItLoaded: a run fine-tuned from finetune.init_from
// logs one info line naming the file, what it is, the dtype and number of
// the tensors loaded and whether pos_embed was resampled, a plain float32
// state_dict included (it used to load with no line at all).
func TestInitFromLogsWhatItLoaded(t *testing.T) {
	src := tinyModel(t, nil)
	n := len(src.Params)
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain_f32.safetensors")
	var ts []safetensors.Tensor
	for _, p := range src.Params {
		ts = append(ts, safetensors.FromFloat32(p.Name, p.Shape, p.Value.Data().([]float32)))
	}
	if err := safetensors.Write(plain, ts, nil); err != nil {
		t.Fatal(err)
	}
	ours := filepath.Join(dir, "ours.safetensors")
	if err := checkpoint.SaveModel(ours, src, checkpoint.ModelMeta{Weights: "raw"}, nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		file string
		size layers.Size2
		want []string
	}{
		{"plain f32", plain, layers.Size2{28, 28}, []string{"a plain state_dict", fmt.Sprintf("%d tensors (F32 ×%d)", n, n), "pos_embed not resampled"}},
		{"ours at 56", ours, layers.Size2{56, 56}, []string{"a vitgo model file", fmt.Sprintf("%d tensors (F32 ×%d)", n, n), "pos_embed resampled [1 17 16] → [1 65 16]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tinyRun(t)
			cfg.Model.ImgSize = tc.size
			cfg.Finetune.InitFrom = tc.file
			cfg.Train.MaxSteps = 1
			var buf bytes.Buffer
			log := logrus.New()
			log.SetOutput(&buf)
			log.SetLevel(logrus.InfoLevel)
			if _, err := Run(context.Background(), cfg, Options{Log: log}); err != nil {
				t.Fatal(err)
			}
			var line string
			for _, l := range strings.Split(buf.String(), "\n") {
				if strings.Contains(l, "init_from: loaded "+tc.file) {
					line = l
				}
			}
			if line == "" {
				t.Fatalf("no info line \"init_from: loaded %s\" in the log:\n%s", tc.file, buf.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(line, w) {
					t.Errorf("%q does not say %q", line, w)
				}
			}
		})
	}
}
