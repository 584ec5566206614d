package main

import (
	"fmt"
	"slices"
	"strings"
)

// variant is one recipe change against configs/mnist_vit_tiny.yaml, as
// config overrides.
type variant struct {
	Name      string
	Change    string   // what differs from the default recipe, for the table
	Overrides []string // -set key=value pairs
}

// variants are the default recipe, each remedy switched off in turn, all of
// them off at once, and Mixup/CutMix switched on (the default has it off).
var variants = []variant{
	{"default", "the recipe as in configs/mnist_vit_tiny.yaml", nil},
	{"no_warmup", "optim.warmup_epochs → 0", []string{"optim.warmup_epochs=0"}},
	{"no_zero_init_head", "model.zero_init_head true → false (head trunc-normal .02)", []string{"model.zero_init_head=false"}},
	{"no_clip", "optim.clip_grad 1.0 → 0 (off)", []string{"optim.clip_grad=0"}},
	{"no_drop_path", "model.drop_path_rate 0.05 → 0", []string{"model.drop_path_rate=0"}},
	{"no_remedies", "all four above off at once", []string{"optim.warmup_epochs=0", "model.zero_init_head=false", "optim.clip_grad=0", "model.drop_path_rate=0"}},
	{"mixup_cutmix_on", "ON: mixup.mixup_alpha 0 → 0.8, mixup.cutmix_alpha 0 → 1.0 (DeiT)", []string{"mixup.mixup_alpha=0.8", "mixup.cutmix_alpha=1.0"}},
}

// pickVariants returns the named variants in table order ("all" = every one).
func pickVariants(list string) ([]variant, error) {
	if list == "all" {
		return variants, nil
	}
	names := strings.Split(list, ",")
	for i, n := range names {
		names[i] = strings.TrimSpace(n)
		if !slices.ContainsFunc(variants, func(v variant) bool { return v.Name == names[i] }) {
			return nil, fmt.Errorf("-variants: unknown variant %q", names[i])
		}
	}
	return slices.DeleteFunc(slices.Clone(variants), func(v variant) bool { return !slices.Contains(names, v.Name) }), nil
}
