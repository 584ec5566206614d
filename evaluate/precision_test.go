package evaluate

import (
	"errors"
	"testing"

	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/internal/enum"
)

// TestWithPrecision: every evaluator constructor builds its graph in the
// precision given (bf16 logits differ from fp32's, and the NoMaps, maps and
// Frozen graphs agree in bf16 bit for bit), and refuses an unknown one.
func TestWithPrecision(t *testing.T) {
	m := tinyModel(t)
	const batch = 2
	x := make([]float32, batch*28*28)
	for i := range x {
		x[i] = float32(i%13)/6 - 1
	}
	logits := func(ev *Evaluator, err error) []float32 {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer ev.Close()
		l, err := ev.Logits(x, batch)
		if err != nil {
			t.Fatal(err)
		}
		return append([]float32(nil), l...)
	}
	bf := graph.BF16
	ref32 := logits(New(m, batch))
	ref := logits(New(m, batch, WithPrecision(bf)))
	same := func(a, b []float32) bool {
		for i := range a {
			if a[i] != b[i] {
				return false
			}
		}
		return true
	}
	if same(ref, ref32) {
		t.Error("bf16 logits equal fp32 ones")
	}
	for name, got := range map[string][]float32{
		"NewMaps":     logits(NewMaps(m, batch, WithPrecision(bf))),
		"NewFrozenIn": logits(NewFrozenIn(m, batch, graph.NewArena(), WithPrecision(bf))),
	} {
		if !same(got, ref) {
			t.Errorf("%s in bf16: logits %v, New's %v", name, got, ref)
		}
	}
	_, err := New(m, batch, WithPrecision("fp16"))
	var ee *enum.Error
	if !errors.As(err, &ee) {
		t.Errorf("precision fp16: %v, want an *enum.Error", err)
	}
}
