package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/vitgo/vit/experiments/internal/report"
	"github.com/vitgo/vit/train"
)

// writeReadme rewrites the experiment's README.md.
func writeReadme(path, cmd string, wall time.Duration, table, ckpt, trainedBy string, meta train.ModelMeta, a analysis) error {
	var b strings.Builder
	fmt.Fprintf(&b, `# Attention maps: where the class token looks

For the first MNIST test image of each class 0…%d, three views (columns: one digit each):
`, len(a.shown)-1)
	b.WriteString(`
1. the image;
2. **last-layer CLS attention**: the class token's attention row in the last block, averaged over heads, over the
   49 patch tokens (its attention to itself dropped, the rest renormalised);
3. **attention rollout** (Abnar & Zuidema 2020): per block the head-mean attention A mixed with the residual
   path, Â = ½A + ½I, rows renormalised, multiplied over blocks R = Â_L ⋯ Â_1; the class token's row of R
   over the patches.

Both 7×7 maps are upsampled bilinearly (align_corners=False) to 28×28 and overlaid on the digit (colour scaled
to each map's maximum, black body palette, 60 % colour). Each column's header gives the digit's label and the
model's prediction.

## Command

` + "```" + `
` + cmd + `
` + "```" + `

Wall time on the 2-core development machine: ` + report.RoundWall(wall) + `.
`)
	if trainedBy != "" {
		fmt.Fprintf(&b, "\nThe model was trained by the command (`%s`) and read from `%s` (step %d).\n", trainedBy, ckpt, meta.Step)
	} else {
		fmt.Fprintf(&b, "\nThe model was read from `%s` (step %d), so the wall time covers no training.%s\n", ckpt, meta.Step, report.Provenance(ckpt))
	}
	b.WriteString("Without `-checkpoint` the command trains the default recipe itself (6 epochs of all 60k images, about 10 minutes\n" +
		"at 600 img/s; the same run as `experiments/pos_similarity` makes, so `-checkpoint runs/experiments/pos_similarity/last.safetensors`\n" +
		"reuses that one); budget flags: `-epochs`, `-limit-train`, `-limit-val`, `-max-steps`, `-seed`, `-set key=value`;\n" +
		"`-n` digits drawn, `-stats` test images averaged.\n")
	fmt.Fprintf(&b, `
## Result

![image, last-layer CLS attention and rollout for eight test digits](attention_maps.png)

How much of each map lies on patches holding ink (4×4 patch mean pixel > %.0f of 255); a map spread evenly
over the patches would score the "patches with ink" column:

`, inkThresh)
	b.WriteString(table)
	fmt.Fprintf(&b, "\nOver the first %d test images the last-layer CLS attention puts %.1f %% of its mass on the %.1f %% of patches "+
		"that hold ink (%.2f× uniform), rollout %.1f %% (%.2f× uniform). The largest single-patch share is on average %.1f %% "+
		"(CLS attention) and %.1f %% (rollout), against %.1f %% for a uniform map.\n",
		a.n, 100*a.mean.CLS, 100*a.mean.InkFrac, a.mean.CLS/a.mean.InkFrac, 100*a.mean.Roll, a.mean.Roll/a.mean.InkFrac,
		100*a.heatPeaks[0], 100*a.heatPeaks[1], 100.0/float64(meta.Model.NumPatches()))
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("readme: %w", err)
	}
	return nil
}
