package layers

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"weak"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/graph"
)

// frozenLogits builds a Frozen graph of m in prec at batch, runs it on the
// fixed ramp and returns a copy of its logits.
func frozenLogits(t *testing.T, m *VisionTransformer, batch int, prec graph.Precision) []float32 {
	t.Helper()
	g, err := m.Build(batch, BuildOptions{Frozen: true, Precision: prec})
	if err != nil {
		t.Fatal(err)
	}
	fillInput32(g)
	vm := runGraph(t, g.G)
	defer vm.Close()
	return slices.Clone(g.Logits.Value().Data().([]float32))
}

// TestReleaseFloatWeights: once ReleaseFloatWeights(int8) has run, the float
// tensors of the weights an int8 Frozen graph reads packed are gone —
// unreachable, even from graphs built before the release — and the rest
// stay; the graphs built before and after give the same logits from the one
// quantized copy; every use that needs a released float weight is refused
// with *ReleasedError.
func TestReleaseFloatWeights(t *testing.T) {
	for _, tc := range []struct {
		name      string
		form      PatchEmbedForm
		readout   Readout
		distilled bool
	}{
		{"linear cls", PatchLinear, ReadoutCLS, false},
		{"conv", PatchConv, ReadoutCLS, false},
		{"mean", PatchLinear, ReadoutMean, false},
		{"distilled", PatchLinear, ReadoutCLS, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tinyConfig()
			c.ImgSize, c.PatchSize, c.EmbedDim, c.NumHeads, c.Depth, c.NumClasses = Size2{16, 16}, 4, 64, 2, 2, 10
			c.PatchEmbed, c.Readout, c.Distilled = tc.form, tc.readout, tc.distilled
			m, err := New(c, tensor.Float32, 3)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range m.Params {
				InitTruncNormal(p.Value, 0.1, randFor(p.Name))
			}
			before, err := m.Build(2, BuildOptions{Frozen: true, Precision: graph.INT8})
			if err != nil {
				t.Fatal(err)
			}
			want := frozenLogits(t, m, 2, graph.INT8)
			gone := map[string]weak.Pointer[float32]{}
			for _, p := range m.Params {
				if m.readsPacked(p) {
					gone[p.Name] = weak.Make(&p.Value.Data().([]float32)[0])
				}
			}
			if err := m.ReleaseFloatWeights(graph.INT8); err != nil {
				t.Fatal(err)
			}
			for _, p := range m.Params {
				_, released := gone[p.Name]
				conv := p.Name == "patch_embed.proj.weight" && tc.form == PatchConv
				if released != (p.spec.flags&packed != 0 && !conv) || (p.Value == nil) != released {
					t.Errorf("%s: released %v (Value nil %v)", p.Name, released, p.Value == nil)
				}
			}
			runtime.GC()
			for name, w := range gone {
				if w.Value() != nil {
					t.Errorf("%s: its float32 weights are still reachable after the release", name)
				}
			}
			runtime.KeepAlive(before)

			bytes := m.WeightBytes()
			for _, b := range []int{2, 2, 1} { // more graphs read the one quantized copy
				got := frozenLogits(t, m, b, graph.INT8)
				if b == 2 && !slices.Equal(got, want) {
					t.Errorf("batch %d after the release: logits %v, want %v", b, got, want)
				}
			}
			if got := m.WeightBytes(); got != bytes {
				t.Errorf("WeightBytes %d after more graphs, %d before", got, bytes)
			}
			fillInput32(before)
			vm := runGraph(t, before.G)
			if got := before.Logits.Value().Data().([]float32); !slices.Equal(got, want) {
				t.Errorf("the graph built before the release: logits %v, want %v", got, want)
			}
			vm.Close()

			for _, o := range []BuildOptions{{}, {NoMaps: true}, {Training: true}, {Frozen: true}, {Frozen: true, Precision: graph.BF16}} {
				if o.Precision.IsBF16() && tc.form == PatchConv {
					continue // refused for the conv form first
				}
				_, err := m.Build(2, o)
				var re *ReleasedError
				if !errors.As(err, &re) || gone[re.Name] == (weak.Pointer[float32]{}) || !slices.Equal(re.Kept, []graph.Precision{graph.INT8}) {
					t.Errorf("Build %+v after the release: %v, want a *ReleasedError naming a released weight and int8", o, err)
				}
			}
			var re *ReleasedError
			if err := m.CheckFloatWeights(); !errors.As(err, &re) {
				t.Errorf("CheckFloatWeights: %v, want a *ReleasedError", err)
			}
			m.Init(5) // new float tensors: every graph builds again
			if err := m.CheckFloatWeights(); err != nil {
				t.Errorf("CheckFloatWeights after Init: %v", err)
			}
			if _, err := m.Build(2, BuildOptions{}); err != nil {
				t.Errorf("an evaluation graph after Init: %v", err)
			}
		})
	}
}

// TestReleaseKeepsOtherFrozenPrecisions: a model packed for fp32 before an
// int8 release still builds Frozen fp32 graphs from its panels, with the
// logits of before.
func TestReleaseKeepsOtherFrozenPrecisions(t *testing.T) {
	c := tinyConfig()
	m, err := New(c, tensor.Float32, 3)
	if err != nil {
		t.Fatal(err)
	}
	want := frozenLogits(t, m, 2, graph.FP32)
	if err := m.ReleaseFloatWeights(graph.INT8); err != nil {
		t.Fatal(err)
	}
	if got := frozenLogits(t, m, 2, graph.FP32); !slices.Equal(got, want) {
		t.Errorf("fp32 after an int8 release: %v, want %v", got, want)
	}
	_, err = m.Build(2, BuildOptions{Frozen: true, Precision: graph.BF16})
	var re *ReleasedError
	if !errors.As(err, &re) || !slices.Equal(re.Kept, []graph.Precision{graph.FP32, graph.INT8}) {
		t.Errorf("bf16 after the release: %v, want a *ReleasedError keeping fp32 and int8", err)
	}
}

// TestReleaseWhileBuilding: ReleaseFloatWeights may run while other
// goroutines build int8 Frozen graphs (a lane at another batch size): each
// build succeeds and reads the one quantized copy (run under -race).
func TestReleaseWhileBuilding(t *testing.T) {
	m, err := New(tinyConfig(), tensor.Float32, 3)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for b := 1; b <= 4; b++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := m.Build(b, BuildOptions{Frozen: true, Precision: graph.INT8}); err != nil {
				errs <- err
			}
		}()
	}
	if err := m.ReleaseFloatWeights(graph.INT8); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestInt8WeightBytes: an int8 serving model of ViT-S/16 and ViT-B/16 at
// 224 with 1000 classes, its float weights released, holds at most 0.3× the
// bytes of its float32 weights (issue 45's goal), and at least the int8
// integers of its blocks' Linear weights.
func TestInt8WeightBytes(t *testing.T) {
	for _, name := range []string{"vit_small_patch16_224", "vit_base_patch16_224"} {
		t.Run(name, func(t *testing.T) {
			if testing.Short() && name == "vit_base_patch16_224" {
				t.Skip("a 350 MB model")
			}
			c := Presets[name]
			c.NumClasses = 1000
			m, err := New(c, tensor.Float32, 1)
			if err != nil {
				t.Fatal(err)
			}
			f32 := m.WeightBytes()
			if want := 4 * int64(m.NumParams()); f32 != want {
				t.Fatalf("float32 model: WeightBytes %d, want 4 × %d parameters", f32, m.NumParams())
			}
			if err := m.ReleaseFloatWeights(graph.INT8); err != nil {
				t.Fatal(err)
			}
			if _, err := m.Build(1, BuildOptions{Frozen: true, Precision: graph.INT8}); err != nil {
				t.Fatal(err)
			}
			i8 := m.WeightBytes()
			c = m.Config
			D, H := int64(c.EmbedDim), int64(c.Hidden())
			ints := int64(c.Depth) * (3*D*D + D*D + 2*D*H)
			ratio := float64(i8) / float64(f32)
			t.Logf("%s: float32 %d bytes, int8 %d bytes, ratio %.3f", name, f32, i8, ratio)
			if ratio > 0.3 || i8 < ints {
				t.Errorf("int8 holds %d bytes, %.3f× float32's %d (want ≤ 0.3×, and ≥ the %d int8 integers)", i8, ratio, f32, ints)
			}
		})
	}
}

// ExampleVisionTransformer_ReleaseFloatWeights: an int8 serving model keeps
// its quantized Linear weights only.
func ExampleVisionTransformer_ReleaseFloatWeights() {
	m, _ := New(Presets["vit_small_patch16_224"], tensor.Float32, 0)
	f32 := m.WeightBytes()
	if err := m.ReleaseFloatWeights(graph.INT8); err != nil {
		panic(err)
	}
	fmt.Println(m.WeightBytes() < f32*3/10, m.Param("blocks.0.attn.qkv.weight").Value == nil)
	_, err := m.Build(1, BuildOptions{})
	var re *ReleasedError
	fmt.Println(errors.As(err, &re), re.Name)
	// Output:
	// true true
	// true patch_embed.proj.weight
}
