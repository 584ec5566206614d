package train

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/optim"
)

func names(c layers.Config) []string {
	var out []string
	for _, s := range layers.ParamShapes(c) {
		out = append(out, s.Name)
	}
	return out
}

// TestFrozenPatterns: which names each setting freezes, on a 12-block ViT
// (so that blocks.[0-5].* must not take blocks.10 and .11) with a
// distillation head's names added, as a distilled model has them.
func TestFrozenPatterns(t *testing.T) {
	all := append(names(layers.DefaultConfig()), "head_dist.weight", "head_dist.bias")
	frozenOf := func(fc FinetuneConfig) []string {
		t.Helper()
		f, err := fc.Frozen(all)
		if err != nil {
			t.Fatalf("%+v: %v", fc, err)
		}
		var out []string
		for i, x := range f {
			if x {
				out = append(out, all[i])
			}
		}
		return out
	}
	if got := frozenOf(FinetuneConfig{}); len(got) != 0 {
		t.Errorf("nothing set froze %v", got)
	}
	got := frozenOf(FinetuneConfig{Freeze: []string{"patch_embed.*", "blocks.[0-5].*"}})
	if len(got) != 2+6*12 {
		t.Errorf("patch_embed.* + blocks.[0-5].*: %d tensors frozen, want %d", len(got), 2+6*12)
	}
	for _, n := range got {
		if !strings.HasPrefix(n, "patch_embed.") && !slices.Contains([]string{"0", "1", "2", "3", "4", "5"}, strings.Split(n, ".")[1]) {
			t.Errorf("%s frozen by patch_embed.*, blocks.[0-5].*", n)
		}
	}
	probe := frozenOf(FinetuneConfig{LinearProbe: true})
	if len(probe) != len(all)-4 || slices.Contains(probe, "head.weight") || slices.Contains(probe, "head_dist.bias") || !slices.Contains(probe, "norm.weight") {
		t.Errorf("linear_probe froze %d of %d tensors: %v", len(probe), len(all), probe)
	}

	for _, tc := range []struct {
		fc      FinetuneConfig
		key     string
		pattern string
	}{
		{FinetuneConfig{Freeze: []string{"blocks.*", "blocks.12.*"}}, "finetune.freeze[1]", "blocks.12.*"},
		{FinetuneConfig{Freeze: []string{"blocks.[0-5.*"}}, "finetune.freeze[0]", "blocks.[0-5.*"},
		{FinetuneConfig{Freeze: []string{"blocks.*"}, LinearProbe: true}, "finetune.freeze", ""},
		{FinetuneConfig{Freeze: []string{"*"}}, "finetune.freeze", ""},
	} {
		_, err := tc.fc.Frozen(all)
		var fe *FreezeError
		var ce *ConfigError
		if !errors.As(err, &fe) || !errors.As(err, &ce) || ce.Key != tc.key || fe.Pattern != tc.pattern {
			t.Errorf("%+v: %v, want a *FreezeError for key %s, pattern %q", tc.fc, err, tc.key, tc.pattern)
		}
	}
}

// TestFreezeConfigLine: a pattern that matches nothing is refused when the
// YAML is read, naming the key, the pattern and the line.
func TestFreezeConfigLine(t *testing.T) {
	_, err := ParseConfig([]byte("model:\n  depth: 2\nfinetune:\n  freeze: [\"blocks.0.*\", \"blocks.[2-3].*\"]\n"), nil)
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Key != "finetune.freeze[1]" || ce.Line != 4 || !strings.Contains(err.Error(), "blocks.[2-3].*") {
		t.Fatalf("got %v, want finetune.freeze[1] (line 4) naming the pattern", err)
	}
	if _, err := ParseConfig([]byte("finetune:\n  linear_probe: true\n"), nil); err != nil {
		t.Fatal(err)
	}
}

// TestFrozenStep: a step with frozen parameters computes, for the trained
// ones, the gradients a full step computes, bit for bit; builds no
// backward work for the frozen ones (no weight gradient of a frozen
// Linear, no input gradient into frozen blocks); and leaves them unchanged,
// without optimizer state, with their EMA equal to them.
func TestFrozenStep(t *testing.T) {
	const batch = 4
	oc := optim.DefaultConfig()
	oc.EMA = true
	newStep := func(frozen map[string]bool) *Step {
		t.Helper()
		s, err := NewStep(tinyModel(t, nil), StepConfig{Batch: batch, Seed: 1, Optim: oc, StepsPerEpoch: 1, TotalSteps: 4, Frozen: frozen})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return s
	}
	full := newStep(nil)
	c := tinyModel(t, nil).Config
	var probeNames, lowNames map[string]bool
	var err error
	cfg := Config{Model: c}
	cfg.Finetune.LinearProbe = true
	if probeNames, err = FrozenNames(cfg); err != nil {
		t.Fatal(err)
	}
	cfg.Finetune = FinetuneConfig{Freeze: []string{"cls_token", "pos_embed", "patch_embed.*", "blocks.0.*"}}
	if lowNames, err = FrozenNames(cfg); err != nil {
		t.Fatal(err)
	}
	cfg.Finetune = FinetuneConfig{Freeze: []string{"blocks.*.attn.qkv.weight", "blocks.*.mlp.fc1.weight"}}
	inner, err := FrozenNames(cfg)
	if err != nil {
		t.Fatal(err)
	}
	probe, low, mid := newStep(probeNames), newStep(lowNames), newStep(inner)

	// Backward ops in each graph: Linear's weight (LinearDw) and input
	// (LinearDx) gradients. Depth 2: patch embedding, 4 Linears per block,
	// head.
	count := func(s *Step, op string) int {
		n := 0
		for _, nd := range s.tg.G.AllNodes() {
			if nd.Op() != nil && nd.Op().String() == op {
				n++
			}
		}
		return n
	}
	for _, tc := range []struct {
		name   string
		s      *Step
		dw, dx int
	}{
		{"full", full, 1 + 8 + 1, 8 + 1}, // no dX into the image
		{"linear probe", probe, 1, 0},    // head dW only
		{"blocks.0 frozen", low, 4 + 1, 4 + 1},
		// frozen weights between trained ones: their input gradients are
		// needed, their weight gradients are not
		{"qkv and fc1 weights frozen", mid, 1 + 4 + 1, 8 + 1},
	} {
		if dw, dx := count(tc.s, "LinearDw"), count(tc.s, "LinearDx"); dw != tc.dw || dx != tc.dx {
			t.Errorf("%s: %d LinearDw and %d LinearDx nodes, want %d and %d", tc.name, dw, dx, tc.dw, tc.dx)
		}
	}

	x, tg := randomBatch(c, batch)
	fullGrads := map[string][]float32{}
	if _, err := full.Backward(x, tg, 0); err != nil {
		t.Fatal(err)
	}
	for i, j := range full.tg.Trained {
		fullGrads[full.params[j].Name] = slices.Clone(full.tg.Grads[i].Value().Data().([]float32))
	}
	for _, s := range []*Step{probe, low, mid} {
		before := map[string][]float32{}
		for _, p := range s.params {
			before[p.Name] = slices.Clone(p.Value)
		}
		for step := range 2 {
			if _, err := s.Backward(x, tg, step); err != nil {
				t.Fatal(err)
			}
			if step == 0 {
				for i, j := range s.tg.Trained {
					name := s.params[j].Name
					if !slices.Equal(s.tg.Grads[i].Value().Data().([]float32), fullGrads[name]) {
						t.Errorf("gradient of %s differs from the full step's", name)
					}
				}
			}
			if _, err := s.Update(step); err != nil {
				t.Fatal(err)
			}
		}
		var st State
		if err := s.SaveTo(&st, 2); err != nil {
			t.Fatal(err)
		}
		trained := 0
		for _, p := range s.params {
			_, hasM := st.M[p.Name]
			if !p.Frozen {
				trained++
				if !hasM || slices.Equal(p.Value, before[p.Name]) && p.Name != "head.bias" {
					t.Errorf("trained %s: moments %v, changed %v", p.Name, hasM, !slices.Equal(p.Value, before[p.Name]))
				}
				continue
			}
			if hasM || !slices.Equal(p.Value, before[p.Name]) || !slices.Equal(st.EMA[p.Name], p.Value) {
				t.Errorf("frozen %s: moments %v, changed %v, EMA equal %v", p.Name, hasM, !slices.Equal(p.Value, before[p.Name]), slices.Equal(st.EMA[p.Name], p.Value))
			}
		}
		if len(st.M) != trained || len(st.V) != trained {
			t.Errorf("%d and %d moments, want %d", len(st.M), len(st.V), trained)
		}
	}

	if _, err := NewStep(tinyModel(t, nil), StepConfig{Batch: batch, Frozen: map[string]bool{"blocks.7.norm1.weight": true}}); err == nil {
		t.Error("a frozen name missing from the model was accepted")
	}
}

// TestResumeRefusesFreezeChange: the frozen set is part of the run's math.
func TestResumeRefusesFreezeChange(t *testing.T) {
	old := DefaultConfig()
	for _, edit := range []func(*Config){
		func(c *Config) { c.Finetune.Freeze = []string{"blocks.0.*"} },
		func(c *Config) { c.Finetune.LinearProbe = true },
	} {
		c := DefaultConfig()
		edit(&c)
		changes, err := diffConfigs(old, c)
		if err != nil {
			t.Fatal(err)
		}
		if len(changes) != 1 || !strings.HasPrefix(changes[0].Key, "finetune.") || changes[0].Why == "" {
			t.Errorf("changes %+v, want one refused finetune key", changes)
		}
	}
}

// TestResumeComparesFrozenSets: a resume compares the set of parameters
// the freeze keys resolve to, not their text: reordered or redundant
// patterns, or linear_probe spelled out as patterns, resume; a pattern
// that changes the set is refused.
func TestResumeComparesFrozenSets(t *testing.T) {
	var notHead []string
	for _, p := range layers.ParamShapes(DefaultConfig().Model) {
		if !strings.HasPrefix(p.Name, "head.") {
			notHead = append(notHead, p.Name)
		}
	}
	freeze := func(pats ...string) FinetuneConfig { return FinetuneConfig{Freeze: pats} }
	for _, tc := range []struct {
		name     string
		old, new FinetuneConfig
		refused  bool
	}{
		{"reordered", freeze("patch_embed.*", "blocks.0.*"), freeze("blocks.0.*", "patch_embed.*"), false},
		{"redundant", freeze("patch_embed.*", "blocks.0.*"), freeze("blocks.0.*", "patch_embed.proj.*", "patch_embed.*"), false},
		{"linear_probe spelled out", FinetuneConfig{LinearProbe: true}, freeze(notHead...), false},
		{"one block fewer", freeze("patch_embed.*", "blocks.0.*"), freeze("patch_embed.*"), true},
		{"another block", freeze("blocks.0.*"), freeze("blocks.1.*"), true},
		{"linear_probe off", FinetuneConfig{LinearProbe: true}, FinetuneConfig{}, true},
	} {
		old, c := DefaultConfig(), DefaultConfig()
		old.Finetune, c.Finetune = tc.old, tc.new
		changes, err := diffConfigs(old, c)
		if err != nil {
			t.Fatal(err)
		}
		refused := false
		for _, ch := range changes {
			if !strings.HasPrefix(ch.Key, "finetune.") {
				t.Errorf("%s: change of %s", tc.name, ch.Key)
			}
			refused = refused || ch.Why != ""
		}
		if len(changes) == 0 || refused != tc.refused {
			t.Errorf("%s: changes %+v, want refused %t", tc.name, changes, tc.refused)
		}
	}
}

// randomBatch returns batch images of c's shape drawn from N(0, 1) and
// one-hot targets cycling through the classes.
func randomBatch(c layers.Config, batch int) (x, targets []float32) {
	rng := rand.New(rand.NewPCG(1, 2))
	x = make([]float32, batch*c.InChans*c.ImgSize[0]*c.ImgSize[1])
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	targets = make([]float32, batch*c.NumClasses)
	for i := range batch {
		targets[i*c.NumClasses+i%c.NumClasses] = 1
	}
	return x, targets
}

// TestResumeWithReorderedFreeze: a run resumes with its freeze patterns in
// another order, and ends where the uninterrupted run does.
func TestResumeWithReorderedFreeze(t *testing.T) {
	ref := tinyRun(t)
	ref.Train.MaxSteps = 4
	ref.Finetune.Freeze = []string{"patch_embed.*", "blocks.0.*"}
	if _, err := Run(context.Background(), ref, Options{Log: quietLog()}); err != nil {
		t.Fatal(err)
	}
	cfg := ref
	cfg.Train.OutDir, cfg.Train.MaxSteps = t.TempDir(), 2
	if _, err := Run(context.Background(), cfg, Options{Log: quietLog()}); err != nil {
		t.Fatal(err)
	}
	cfg.Train.MaxSteps = 4
	cfg.Finetune.Freeze = []string{"blocks.0.*", "patch_embed.*"}
	if _, err := Run(context.Background(), cfg, Options{Log: quietLog(), Resume: true}); err != nil {
		t.Fatalf("resume with the patterns reordered: %v", err)
	}
	if d, at := maxRelDiff(t, finalWeights(t, ref.Train.OutDir), finalWeights(t, cfg.Train.OutDir)); d != 0 {
		t.Errorf("resumed run differs from the uninterrupted one: %g at %s", d, at)
	}
}
