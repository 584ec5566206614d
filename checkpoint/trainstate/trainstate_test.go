package trainstate_test

import (
	"errors"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/vitgo/vit/checkpoint"
	"github.com/vitgo/vit/checkpoint/safetensors"
	"github.com/vitgo/vit/checkpoint/trainstate"
)

// TestFormatIsTheModelFormats: the state file's format tag is the model
// files' version with "/train", as it has always been written.
func TestFormatIsTheModelFormats(t *testing.T) {
	if trainstate.Format != checkpoint.FormatVersion+"/train" {
		t.Errorf("Format %q, want %q", trainstate.Format, checkpoint.FormatVersion+"/train")
	}
	if got := trainstate.PathFor("out/last.safetensors"); got != "out/last.train.safetensors" || checkpoint.StateFileFor("out/last.safetensors") != got {
		t.Errorf("PathFor: %q", got)
	}
}

// TestRoundTrip writes every kind of tensor, with slot and parameter names
// holding dots where they may, and reads them back; ReadEMA reads the EMA.
func TestRoundTrip(t *testing.T) {
	in := trainstate.File{
		Metadata: map[string]string{"step": "3"},
		Slots: map[string]map[string][]float32{
			"exp_avg":    {"blocks.0.attn.qkv.weight": {1, 2}, "head.bias": {3}},
			"exp_avg_sq": {"blocks.0.attn.qkv.weight": {4, 5}, "head.bias": {6}},
		},
		EMA:     map[string][]float32{"head.bias": {7}},
		Weights: map[string][]float32{"head.bias": {8}},
	}
	path := filepath.Join(t.TempDir(), "last.train.safetensors")
	if err := trainstate.Write(path, in); err != nil {
		t.Fatal(err)
	}
	out, err := trainstate.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Errorf("read back %+v, wrote %+v", out, in)
	}
	ema, err := trainstate.ReadEMA(path)
	if err != nil || !reflect.DeepEqual(ema, in.EMA) {
		t.Errorf("ReadEMA: %v, %v", ema, err)
	}
}

// TestRefusals: bad files and bad slot names are typed errors naming the
// file or the slot.
func TestRefusals(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, ts []safetensors.Tensor, format string) string {
		p := filepath.Join(dir, name)
		if err := safetensors.Write(p, ts, map[string]string{"format": format}); err != nil {
			t.Fatal(err)
		}
		return p
	}
	one := []float32{1}
	tests := []struct {
		name string
		path string
		want any
	}{
		{"format", write("a", []safetensors.Tensor{safetensors.Float32View("ema.x", []int{1}, one)}, "vitgo/1"), new(*trainstate.FormatError)},
		{"tensor", write("b", []safetensors.Tensor{safetensors.Float32View("moments.x", []int{1}, one)}, trainstate.Format), new(*trainstate.TensorError)},
		{"slot without param", write("c", []safetensors.Tensor{safetensors.Float32View("optim.m", []int{1}, one)}, trainstate.Format), new(*trainstate.TensorError)},
	}
	for _, tc := range tests {
		_, err := trainstate.Read(tc.path)
		if err == nil || !errors.As(err, tc.want) {
			t.Errorf("%s: %v, want %T", tc.name, err, tc.want)
		}
	}
	err := trainstate.Write(filepath.Join(dir, "d"), trainstate.File{Slots: map[string]map[string][]float32{"a.b": {"x": one}}})
	if err == nil {
		t.Error("a slot name with a dot was written")
	}
}
