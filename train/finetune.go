package train

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/vitgo/vit/checkpoint"
	"github.com/vitgo/vit/checkpoint/safetensors"
	"github.com/vitgo/vit/layers"
)

// InitFrom loads finetune.init_from into a freshly initialised model built
// from the run's own model section. The file may be one of our checkpoints
// or a plain timm state_dict saved as safetensors (no metadata of ours). A
// different image size resamples pos_embed; a different num_classes, or
// reset_head, keeps the model's zero-initialised head; anything else that
// differs is an error listing every difference.
func InitFrom(m *layers.VisionTransformer, fc FinetuneConfig) ([]string, error) {
	if _, err := os.Stat(fc.InitFrom); err != nil {
		return nil, fmt.Errorf("finetune.init_from: %w", err)
	}
	f, meta, ours, err := checkpoint.ReadModel(fc.InitFrom)
	if err != nil {
		return nil, fmt.Errorf("finetune.init_from: %w", err)
	}
	opts := checkpoint.LoadOptions{Interp: string(fc.Interp), ResetHead: fc.ResetHead}
	var notes []string
	if ours {
		var diffs []string
		a, b := meta.Model, m.Config
		if a.PatchSize != b.PatchSize {
			diffs = append(diffs, fmt.Sprintf("patch_size %d in the file, %d in the config (projection weights do not resample)", a.PatchSize, b.PatchSize))
		}
		for _, d := range []struct {
			key  string
			x, y int
		}{{"in_chans", a.InChans, b.InChans}, {"embed_dim", a.EmbedDim, b.EmbedDim}, {"depth", a.Depth, b.Depth}, {"num_heads", a.NumHeads, b.NumHeads}} {
			if d.x != d.y {
				diffs = append(diffs, fmt.Sprintf("%s %d in the file, %d in the config", d.key, d.x, d.y))
			}
		}
		if a.MLPRatio != b.MLPRatio {
			diffs = append(diffs, fmt.Sprintf("mlp_ratio %v in the file, %v in the config", a.MLPRatio, b.MLPRatio))
		}
		if a.Distilled != b.Distilled {
			diffs = append(diffs, fmt.Sprintf("distilled %v in the file, %v in the config (the distillation token and head_dist)", a.Distilled, b.Distilled))
		}
		if a.QKVBias.Value() != b.QKVBias.Value() {
			diffs = append(diffs, fmt.Sprintf("qkv_bias %v in the file, %v in the config", a.QKVBias.Value(), b.QKVBias.Value()))
		}
		if len(diffs) > 0 {
			return nil, fmt.Errorf("finetune.init_from %s: the model differs from the config's:\n  %s", fc.InitFrom, strings.Join(diffs, "\n  "))
		}
		gh, gw := a.Grid()
		opts.OldGrid = [2]int{gh, gw}
		if a.NumClasses != b.NumClasses {
			opts.ResetHead = true
		}
	} else if t, ok := f.Get("head.weight"); ok && len(t.Shape) == 2 && t.Shape[0] != m.Config.NumClasses {
		opts.ResetHead = true
	}
	if opts.ResetHead {
		for _, p := range m.Params {
			if layers.IsHead(p.Name) {
				layers.InitConst(p.Value, 0)
			}
		}
		if f2, ok := f.Get("head.weight"); ok {
			notes = append(notes, fmt.Sprintf("head re-initialised to zero (file has %v, model %v)", f2.Shape, []int(m.Param("head.weight").Shape)))
		}
	}
	n2, err := checkpoint.LoadWeights(m, f, opts)
	if err != nil {
		return nil, fmt.Errorf("finetune.init_from %s: %w", fc.InitFrom, err)
	}
	if err := checkWeightsFinite("finetune.init_from", fc.InitFrom, m); err != nil {
		return nil, err
	}
	return append([]string{loadedSummary(m, f, fc.InitFrom, ours, opts.ResetHead)}, append(notes, n2...)...), nil
}

// loadedSummary is InitFrom's first note, logged whatever the file holds (a
// plain float32 state_dict included): the file, what it is, the dtypes and
// number of the tensors copied into the model, and whether pos_embed was
// resampled (the notes after it say how).
func loadedSummary(m *layers.VisionTransformer, f *safetensors.File, path string, ours, resetHead bool) string {
	n := 0
	dtypes := map[safetensors.DType]int{}
	for _, p := range m.Params {
		if resetHead && layers.IsHead(p.Name) {
			continue
		}
		if t, ok := f.Get(p.Name); ok {
			n++
			dtypes[t.DType]++
		}
	}
	var dts []string
	for dt, k := range dtypes {
		dts = append(dts, fmt.Sprintf("%s ×%d", dt, k))
	}
	sort.Strings(dts)
	kind := "a plain state_dict"
	if ours {
		kind = "a vitgo model file"
	}
	resampled := "pos_embed not resampled"
	if t, ok := f.Get("pos_embed"); ok {
		if p := m.Param("pos_embed"); p != nil && !slices.Equal(t.Shape, []int(p.Shape)) {
			resampled = fmt.Sprintf("pos_embed resampled %v → %v", t.Shape, []int(p.Shape))
		}
	}
	return fmt.Sprintf("loaded %s (%s): %d tensors (%s), %s", path, kind, n, strings.Join(dts, ", "), resampled)
}
