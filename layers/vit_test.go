package layers

import (
	"errors"
	"math"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/internal/cfgerr"
	"github.com/vitgo/vit/internal/enum"
	"github.com/vitgo/vit/internal/optional"
)

func TestParamCounts(t *testing.T) {
	b := Presets["vit_base_patch16_224"]
	if got := CountParams(b); got != 86567656 {
		t.Errorf("ViT-B/16: %d parameters, want 86,567,656", got)
	}
	if got := CountParams(Presets["vit_tiny_patch16_224"]); got != 5717416 {
		t.Errorf("ViT-Ti/16: %d parameters, want 5,717,416", got)
	}
	parts := map[string]int{}
	for _, s := range ParamShapes(b) {
		key := s.Name
		switch {
		case strings.HasPrefix(key, "blocks."):
			key = "blocks"
		case strings.HasPrefix(key, "patch_embed."):
			key = "patch_embed"
		case strings.HasPrefix(key, "norm."):
			key = "norm"
		case strings.HasPrefix(key, "head."):
			key = "head"
		}
		parts[key] += s.Shape.TotalSize()
	}
	want := map[string]int{"blocks": 85054464, "patch_embed": 590592, "pos_embed": 151296, "cls_token": 768, "norm": 1536, "head": 769000}
	for k, v := range want {
		if parts[k] != v {
			t.Errorf("ViT-B/16 %s: %d, want %d", k, parts[k], v)
		}
	}
}

func TestTimmNamesAndShapes(t *testing.T) {
	c := tinyConfig()
	shapes := map[string]tensor.Shape{}
	for _, s := range ParamShapes(c) {
		shapes[s.Name] = s.Shape
	}
	for name, want := range map[string]tensor.Shape{
		"cls_token":                {1, 1, 8},
		"pos_embed":                {1, 5, 8},
		"patch_embed.proj.weight":  {8, 1, 2, 2},
		"blocks.1.attn.qkv.weight": {24, 8},
		"blocks.1.attn.qkv.bias":   {24},
		"blocks.0.mlp.fc1.weight":  {16, 8},
		"blocks.0.mlp.fc2.weight":  {8, 16},
		"head.weight":              {3, 8},
		"norm.bias":                {8},
	} {
		if !shapes[name].Eq(want) {
			t.Errorf("%s: shape %v, want %v", name, shapes[name], want)
		}
	}
	if len(shapes) != 4+2*12+4 {
		t.Errorf("%d tensors, want %d", len(shapes), 4+2*12+4)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string // the key the error names
	}{
		{"patch", func(c *Config) { c.PatchSize = 3 }, "model.img_size"},
		{"patch larger than image", func(c *Config) { c.PatchSize = 8 }, "model.patch_size"},
		{"heads", func(c *Config) { c.NumHeads = 3 }, "model.num_heads"},
		{"readout", func(c *Config) { c.Readout = "max" }, "model.readout"},
		{"depth", func(c *Config) { c.Depth = -1 }, "model.depth"},
		{"depth 1e6", func(c *Config) { c.Depth = 1e6 }, "model.depth"},
		{"dim", func(c *Config) { c.EmbedDim = -1 }, "model.embed_dim"},
		{"dim 1e9", func(c *Config) { c.EmbedDim = 1e9 }, "model.embed_dim"},
		{"classes 1e9", func(c *Config) { c.NumClasses = 1e9 }, "model.num_classes"},
		{"img 100000", func(c *Config) { c.ImgSize = Size2{100000, 100000} }, "model.img_size"},
		{"img one side", func(c *Config) { c.ImgSize = Size2{4, -4} }, "model.img_size"},
		{"tokens", func(c *Config) { c.ImgSize, c.PatchSize = Size2{8192, 8192}, 2 }, "model.img_size"},
		{"mlp_ratio 1e12", func(c *Config) { c.MLPRatio = 1e12 }, "model.mlp_ratio"},
		{"mlp_ratio NaN", func(c *Config) { c.MLPRatio = math.NaN() }, "model.mlp_ratio"},
		{"mlp width 0", func(c *Config) { c.MLPRatio = 0.01 }, "model.mlp_ratio"},
		{"drop", func(c *Config) { c.DropPathRate = 1 }, "model.drop_path_rate"},
		{"dropout NaN", func(c *Config) { c.Dropout = math.NaN() }, "model.dropout"},
		{"chans", func(c *Config) { c.InChans = -3 }, "model.in_chans"},
		{"chans 1e6", func(c *Config) { c.InChans = 1e6 }, "model.in_chans"},
		{"ln_eps inf", func(c *Config) { c.LNEps = math.Inf(1) }, "model.ln_eps"},
		{"ln_eps NaN", func(c *Config) { c.LNEps = math.NaN() }, "model.ln_eps"},
		{"ln_eps negative", func(c *Config) { c.LNEps = -1e-6 }, "model.ln_eps"},
		{"ln_eps subnormal in float32", func(c *Config) { c.LNEps = 1e-40 }, "model.ln_eps"},
		{"ln_eps 0 in float32", func(c *Config) { c.LNEps = 1e-300 }, "model.ln_eps"},
		{"act", func(c *Config) { c.Act = "relu" }, "model.act"},
		{"patch_embed", func(c *Config) { c.PatchEmbed = "fft" }, "model.patch_embed"},
	} {
		c := tinyConfig()
		tc.edit(&c)
		err := c.Validate()
		var ce *cfgerr.Error
		if !errors.As(err, &ce) || ce.Key != tc.want {
			t.Errorf("%s: error %v, want a *cfgerr.Error for %s", tc.name, err, tc.want)
		}
		if _, err := New(c, tensor.Float32, 1); err == nil {
			t.Errorf("%s: New accepted an invalid config", tc.name)
		}
	}
	if err := tinyConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	// An option outside its set is an *enum.Error under the key's *cfgerr.Error.
	c := tinyConfig()
	c.Readout = "max"
	var ee *enum.Error
	if err := c.Validate(); !errors.As(err, &ee) || ee.Got != "max" {
		t.Errorf("readout max: error %v, want an *enum.Error", err)
	}
}

// TestZeroConfigIsDefault: the zero Config is valid and is ViT-B/16, and a
// zero field means that field's default; the optional booleans set to false
// stay false.
func TestZeroConfigIsDefault(t *testing.T) {
	if err := (Config{}).Validate(); err != nil {
		t.Fatalf("zero Config: %v", err)
	}
	d := DefaultConfig()
	if got := (Config{}).WithDefaults(); got != d {
		t.Errorf("Config{}.WithDefaults() = %+v, want %+v", got, d)
	}
	if got := (Config{Depth: 3}).WithDefaults(); got.Depth != 3 || got.EmbedDim != 768 {
		t.Errorf("Config{Depth: 3} resolved to depth %d, dim %d", got.Depth, got.EmbedDim)
	}
	if CountParams(Config{}) != CountParams(DefaultConfig()) {
		t.Errorf("CountParams(Config{}) = %d, want ViT-B/16's %d", CountParams(Config{}), CountParams(DefaultConfig()))
	}
	noBias := Config{QKVBias: optional.BoolOf(false), ZeroInitHead: optional.BoolOf(false)}
	if got := noBias.WithDefaults(); got.QKVBias.Value() || got.ZeroInitHead.Value() {
		t.Errorf("false booleans resolved to qkv_bias %v, zero_init_head %v", got.QKVBias, got.ZeroInitHead)
	}
	if got, want := CountParams(noBias), CountParams(DefaultConfig())-12*3*768; got != want {
		t.Errorf("CountParams without qkv_bias = %d, want %d", got, want)
	}
}

// TestBuildFailedOpIsAnError: an op constructor that fails (here LayerNorm on
// eps = +Inf, set behind Validate's back) ends Build with its error instead
// of passing a nil node to the next op (-set model.ln_eps=.inf must be an
// error, not a nil-pointer panic).
func TestBuildFailedOpIsAnError(t *testing.T) {
	for _, eps := range []float64{math.Inf(1), math.NaN(), -1} {
		for _, form := range []PatchEmbedForm{PatchLinear, PatchConv} {
			c := tinyConfig()
			c.PatchEmbed = form
			m, err := New(c, tensor.Float32, 1)
			if err != nil {
				t.Fatal(err)
			}
			m.Config.LNEps = eps
			if _, err := m.Build(2, BuildOptions{Training: true}); err == nil {
				t.Errorf("ln_eps %v, %s: Build succeeded", eps, form)
			}
		}
	}
}

// tinyConfig is a 2-block ViT on 4×4 one-channel images with 2×2 patches.
func tinyConfig() Config {
	c := DefaultConfig()
	c.ImgSize, c.PatchSize, c.InChans, c.EmbedDim, c.Depth, c.NumHeads, c.MLPRatio, c.NumClasses = Size2{4, 4}, 2, 1, 8, 2, 2, 2, 3
	c.ZeroInitHead.Set(false)
	return c
}

func runGraph(t *testing.T, g *G.ExprGraph, opts ...G.VMOpt) G.VM {
	t.Helper()
	m := G.NewTapeMachine(g, opts...)
	if err := m.RunAll(); err != nil {
		t.Fatal(err)
	}
	return m
}

func fillInput(gr *Graph, seed uint64) {
	d := gr.Input.Value().Data().([]float64)
	for i := range d {
		d[i] = math.Sin(float64(i)*0.37+float64(seed)) * 1.5
	}
}

func TestViTGradCheck(t *testing.T) {
	for _, readout := range []Readout{ReadoutCLS, ReadoutMean} {
		for _, form := range []PatchEmbedForm{PatchLinear, PatchConv} {
			t.Run(string(readout)+"-"+string(form), func(t *testing.T) {
				c := tinyConfig()
				c.Readout, c.PatchEmbed = readout, form
				m, err := New(c, tensor.Float64, 3)
				if err != nil {
					t.Fatal(err)
				}
				// Larger weights than trunc_normal(.02) so every path carries signal.
				for _, p := range m.Params {
					if p.Name != "norm.weight" {
						InitTruncNormal(p.Value, 0.5, randFor(p.Name))
					}
				}
				gr, err := m.Build(2, BuildOptions{})
				if err != nil {
					t.Fatal(err)
				}
				fillInput(gr, 1)
				cost := weightedSum(t, gr.Logits)
				wrt := append(G.Nodes{gr.Input}, gr.Params...)
				res, err := graph.GradCheck(cost, wrt, graph.GradCheckOptions{MaxElem: 6, Seed: 2, RTol: 1e-5, ATol: 1e-7})
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("checked %d elements, max |err| %.2g", res.Checked, res.MaxAbsErr)
			})
		}
	}
}

func TestPatchEmbedEquivalence(t *testing.T) {
	// The same weights through conv and unfold+linear: outputs and the
	// input, weight and bias gradients agree to 1e-10.
	run := func(form PatchEmbedForm, scramble bool) (logits, dIn, dW, dB []float64) {
		c := tinyConfig()
		c.ImgSize, c.InChans, c.PatchSize = Size2{6, 4}, 2, 2
		c.PatchEmbed = form
		m := randomModel(t, c, 5)
		if scramble {
			// The wrong-order control: weights laid out (D, P, P, C) reshaped
			// to (D, C, P, P) without permuting.
			w := m.Param("patch_embed.proj.weight").Value.Data().([]float64)
			d, ch, p := c.EmbedDim, c.InChans, c.PatchSize
			src := append([]float64(nil), w...)
			for o := 0; o < d; o++ {
				for ci := 0; ci < ch; ci++ {
					for y := 0; y < p; y++ {
						for x := 0; x < p; x++ {
							w[((o*ch+ci)*p+y)*p+x] = src[((o*p+y)*p+x)*ch+ci]
						}
					}
				}
			}
		}
		gr, err := m.Build(2, BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		fillInput(gr, 2)
		cost := weightedSum(t, gr.Logits)
		w, b := gr.Params[2], gr.Params[3]
		if _, err := G.Grad(cost, gr.Input, w, b); err != nil {
			t.Fatal(err)
		}
		vm := runGraph(t, gr.G, G.BindDualValues(gr.Input, w, b))
		defer vm.Close()
		grad := func(n *G.Node) []float64 {
			v, err := n.Grad()
			if err != nil {
				t.Fatal(err)
			}
			return append([]float64(nil), v.Data().([]float64)...)
		}
		return append([]float64(nil), gr.Logits.Value().Data().([]float64)...), grad(gr.Input), grad(w), grad(b)
	}
	l1, i1, w1, b1 := run(PatchLinear, false)
	l2, i2, w2, b2 := run(PatchConv, false)
	for name, pair := range map[string][2][]float64{"logits": {l1, l2}, "d input": {i1, i2}, "d weight": {w1, w2}, "d bias": {b1, b2}} {
		if d := maxDiff(pair[0], pair[1]); d > 1e-10 {
			t.Errorf("%s: conv and unfold+linear differ by %g", name, d)
		}
	}
	l3, _, _, _ := run(PatchLinear, true)
	if d := maxDiff(l2, l3); d < 1e-3 {
		t.Errorf("wrong-order control differs by only %g: the test cannot tell layouts apart", d)
	}
}

func TestPermutationEquivariance(t *testing.T) {
	// Swapping two patches of the image swaps their token rows at the output
	// of the blocks when there are no positions; a position table breaks it.
	features := func(zeroPos bool, swap bool) []float64 {
		c := tinyConfig()
		c.ImgSize = Size2{4, 6}
		m := randomModel(t, c, 7)
		if zeroPos {
			InitConst(m.Param("pos_embed").Value, 0)
		}
		gr, err := m.Build(1, BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		fillInput(gr, 3)
		if swap { // swap patch (0,0) with patch (1,2) in the 2×3 grid of 2×2 patches
			img := gr.Input.Value().Data().([]float64)
			for y := 0; y < 2; y++ {
				for x := 0; x < 2; x++ {
					a, b := y*6+x, (2+y)*6+4+x
					img[a], img[b] = img[b], img[a]
				}
			}
		}
		vm := runGraph(t, gr.G)
		defer vm.Close()
		// The final LayerNorm's input is the last block's output; read the
		// tokens through the mean readout's gradient-free twin: logits of
		// per-token heads are not exposed, so use Features.
		return append([]float64(nil), gr.Features.Value().Data().([]float64)...)
	}
	d := 8
	perm := func(f []float64) []float64 { // swap token rows 1 and 6 (patch 0 and 5)
		out := append([]float64(nil), f...)
		copy(out[1*d:2*d], f[6*d:7*d])
		copy(out[6*d:7*d], f[1*d:2*d])
		return out
	}
	if e := maxDiff(perm(features(true, false)), features(true, true)); e > 1e-12 {
		t.Errorf("without positions, permuting patches changed features by %g beyond the permutation", e)
	}
	if e := maxDiff(perm(features(false, false)), features(false, true)); e < 1e-3 {
		t.Errorf("with a position table, equivariance should break; max diff only %g", e)
	}
}

func TestBuildErrors(t *testing.T) {
	m, err := New(tinyConfig(), tensor.Float32, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Build(0, BuildOptions{}); err == nil {
		t.Error("batch 0: want an error")
	}
	if _, err := New(tinyConfig(), tensor.Int, 1); err == nil {
		t.Error("int dtype: want an error")
	}
}

// TestFloat32MatchesFloat64 runs the same weights through the float32 path
// (SIMD kernels, our sgemm) and the float64 path (scalar reference, gonum
// dgemm): logits and every parameter gradient of the loss must agree.
func TestFloat32MatchesFloat64(t *testing.T) {
	c := tinyConfig()
	c.ImgSize, c.PatchSize, c.EmbedDim, c.NumHeads, c.Depth = Size2{12, 8}, 4, 16, 4, 2
	run := func(dt tensor.Dtype) (logits []float64, grads [][]float64) {
		m, err := New(c, dt, 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range m.Params {
			InitTruncNormal(p.Value, 0.3, randFor(p.Name)) // same draws in both dtypes
		}
		gr, err := m.Build(3, BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		tgt := tensor.New(tensor.Of(dt), tensor.WithShape(3, c.NumClasses))
		in := tensor.New(tensor.Of(dt), tensor.WithShape(gr.Input.Shape()...))
		for i := 0; i < in.Size(); i++ {
			in.SetAt(convert(dt, math.Sin(float64(i)*0.7)), i/(12*8)%3, 0, i/8%12, i%8)
		}
		for i := 0; i < 3; i++ {
			tgt.SetAt(convert(dt, 1), i, i%c.NumClasses)
		}
		if err := G.Let(gr.Input, in); err != nil {
			t.Fatal(err)
		}
		targets := G.NewTensor(gr.G, dt, 2, G.WithValue(tgt), G.WithName("t"))
		loss, err := graph.SoftmaxCrossEntropy(gr.Logits, targets)
		if err != nil {
			t.Fatal(err)
		}
		gs, err := G.Grad(loss, gr.Params...)
		if err != nil {
			t.Fatal(err)
		}
		vm := runGraph(t, gr.G)
		defer vm.Close()
		for _, g := range append(G.Nodes{gr.Logits}, gs...) {
			var v []float64
			switch d := g.Value().Data().(type) {
			case []float32:
				for _, x := range d {
					v = append(v, float64(x))
				}
			case []float64:
				v = append(v, d...)
			}
			grads = append(grads, v)
		}
		return grads[0], grads[1:]
	}
	l32, g32 := run(tensor.Float32)
	l64, g64 := run(tensor.Float64)
	if d := maxDiff(l32, l64); d > 1e-5 {
		t.Errorf("logits differ by %g", d)
	}
	for i := range g32 {
		scale := 1e-3
		for _, v := range g64[i] {
			scale = math.Max(scale, math.Abs(v))
		}
		if d := maxDiff(g32[i], g64[i]); d > 1e-4*scale {
			t.Errorf("gradient %d differs by %g (scale %g)", i, d, scale)
		}
	}
}

func convert(dt tensor.Dtype, v float64) any {
	if dt == tensor.Float32 {
		return float32(v)
	}
	return v
}

// TestBackwardHasNoGradientAdds: the training graph's backward pass holds
// none of Gorgonia's gradient additions (one serial pass per residual fork
// with graph.Add); graph.Residual sums them inside the LayerNorm kernels.
func TestBackwardHasNoGradientAdds(t *testing.T) {
	for _, form := range []PatchEmbedForm{PatchLinear, PatchConv} {
		c := tinyConfig()
		c.PatchEmbed, c.DropPathRate, c.Dropout = form, 0.1, 0.1
		m, err := New(c, tensor.Float32, 3)
		if err != nil {
			t.Fatal(err)
		}
		gr, err := m.Build(2, BuildOptions{Training: true, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		targets := G.NewTensor(gr.G, tensor.Float32, 2, G.WithShape(2, c.NumClasses), G.WithName("t"))
		loss, err := graph.SoftmaxCrossEntropy(gr.Logits, targets)
		if err != nil {
			t.Fatal(err)
		}
		before := graph.GorgoniaAdds(gr.G) // the conv form's bias add is a forward one
		if _, err := G.Grad(loss, gr.Params...); err != nil {
			t.Fatal(err)
		}
		if adds := graph.GorgoniaAdds(gr.G) - before; adds != 0 {
			t.Errorf("%s: the backward pass has %d Gorgonia gradient adds, want 0", form, adds)
		}
	}
}
