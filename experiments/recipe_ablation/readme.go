package main

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// writeReadme rewrites the experiment's README.md.
func writeReadme(path string, res results, table string) error {
	bud := res.Budget
	images, val := "all 60,000", "all 10,000 test images"
	if bud.LimitTrain > 0 {
		images = fmt.Sprintf("the first %d", bud.LimitTrain)
	}
	if bud.LimitVal > 0 {
		val = fmt.Sprintf("the first %d test images", bud.LimitVal)
	}
	stop := ""
	if bud.MaxSteps > 0 {
		stop = fmt.Sprintf(", stopped at step %d", bud.MaxSteps)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `# Recipe ablation: which ViT training remedies matter here

The default MNIST recipe (`+"`configs/mnist_vit_tiny.yaml`"+`) carries the standard ViT remedies: linear warmup, a
zero-initialised head, global-norm gradient clipping at 1.0 and drop path 0.05 (plus AdamW, cosine decay, label
smoothing 0.05, crop padding 2, which are kept in every variant). Each remedy is switched **off** in turn, then all
four at once; Mixup/CutMix, **off** in the default recipe, is switched **on** (mixup α 0.8, CutMix α 1.0, switch
prob 0.5, as DeiT). Every variant runs with %s and the same budget: %d epoch(s) of %s training images%s, warmup
%g epoch (the recipe's own 1 epoch of 20 would be half of so short a run), evaluated once at the end on %s.

The recipe's learning rate (%g) is run next to a higher one: at ×5 the remedies that exist to keep early
training stable (warmup, clipping, zero-init head) have something to do, so a divergence can actually appear.
A run counts as **non-finite** when `+"`train.Run`"+` stopped with its "non-finite" loss/gradient error; its accuracy
is left out of the mean. **≤ 20 %%** counts finite runs that ended at or below 20 %% top-1 (chance is 10 %%):
collapsed runs, or runs still on the initial plateau near chance that this ViT sits on for its first few hundred
steps. `+"`-lr-mults 1,5,15`"+` adds a ×15 set.

## Command

`+"```"+`
%s
`+"```"+`

Wall time on the 2-core development machine: %s (%d runs, one after another%s).
Budget flags: `+"`-limit-train`"+` (images per epoch), `+"`-epochs`"+`, `+"`-limit-val`"+`, `+"`-max-steps`"+`,
`+"`-warmup-epochs`"+`, `+"`-seeds`"+`, `+"`-lr-mults`"+`, `+"`-variants`"+`; `+"`-set key=value`"+` applies to every run;
`+"`-replot`"+` redraws the table, PNG and this README from the runs' results.json. Runs go to
`+"`runs/experiments/recipe_ablation`"+` (git-ignored).

## Result

`, seedList(res.Seeds), bud.Epochs, images, stop, res.Warmup, val, res.BaseLR, res.Command,
		res.Wall.Round(time.Second), len(res.Cells)*res.Seeds, readBack(res.Cells))
	b.WriteString(table)
	b.WriteString(`
![final validation top-1 per variant and learning rate, with non-finite counts](recipe_ablation.png)
`)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("readme: %w", err)
	}
	return nil
}

// readBack says how many runs an earlier invocation had finished.
func readBack(cells []*cell) string {
	n := 0
	for _, c := range cells {
		for _, o := range c.Runs {
			if o.ReadBack {
				n++
			}
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("; %d of them read back from an earlier invocation, whose wall time is not included", n)
}

// seedList says which seeds ran.
func seedList(n int) string {
	if n == 1 {
		return "seed 0"
	}
	return fmt.Sprintf("seeds 0…%d", n-1)
}
