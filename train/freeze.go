package train

import (
	"fmt"
	"path"

	"github.com/vitgo/vit/internal/cfgerr"
	"github.com/vitgo/vit/layers"
)

// HeadPatterns are the parameters a linear probe trains: the classifier and,
// in a distilled model, the distillation head, as the parameter table flags
// them ([layers.HeadPatterns]). A pattern that matches no parameter of the
// model (head_dist.* without a distillation head) is simply not used.
var HeadPatterns = layers.HeadPatterns()

// FreezeError is a finetune.freeze or finetune.linear_probe setting that
// cannot be applied to the model: a malformed pattern, a pattern that
// matches no parameter, both keys set, or nothing left to train. It wraps
// a *ConfigError naming the key.
type FreezeError struct {
	Pattern string // the pattern at fault; "" for the last two
	Err     *ConfigError
}

func (e *FreezeError) Error() string { return e.Err.Error() }
func (e *FreezeError) Unwrap() error { return e.Err }

// Frozen returns, parallel to names (a model's parameter names, timm's
// dotted state_dict keys), whether fc freezes each one:
//
//   - finetune.freeze: the names matching any of the patterns. A pattern is
//     a path.Match glob over the whole dotted name: * matches any run of
//     characters (dots included, so "patch_embed.*" is the whole patch
//     embedding and "blocks.*" every block), ? one character, [0-5] one
//     character of a class. "blocks.[0-5].*" is blocks 0 to 5 and not
//     blocks.10 (whose index is two characters); "blocks.1*" would match
//     blocks 1 and 10–19. Every pattern must match at least one name.
//   - finetune.linear_probe: every name except HeadPatterns' (head.*, and
//     head_dist.* when the model has a distillation head).
//
// Setting both is an error (linear_probe already freezes all but the
// heads), and so is freezing every parameter. The errors are *FreezeError.
func (fc FinetuneConfig) Frozen(names []string) ([]bool, error) {
	out := make([]bool, len(names))
	if len(fc.Freeze) == 0 && !fc.LinearProbe {
		return out, nil
	}
	if len(fc.Freeze) > 0 && fc.LinearProbe {
		return nil, &FreezeError{Err: cfgerr.New("finetune.freeze", "cannot be combined with finetune.linear_probe, which already freezes all but %v", HeadPatterns)}
	}
	if fc.LinearProbe {
		for i, n := range names {
			out[i] = !matchAny(HeadPatterns, n)
		}
	}
	for k, pat := range fc.Freeze {
		key := fmt.Sprintf("finetune.freeze[%d]", k)
		if _, err := path.Match(pat, ""); err != nil {
			return nil, &FreezeError{Pattern: pat, Err: cfgerr.New(key, "pattern %q: %w", pat, err)}
		}
		hit := false
		for i, n := range names {
			if ok, _ := path.Match(pat, n); ok {
				out[i], hit = true, true
			}
		}
		if !hit {
			return nil, &FreezeError{Pattern: pat, Err: cfgerr.New(key, "pattern %q matches no parameter of the model (names are timm's, e.g. blocks.0.attn.qkv.weight)", pat)}
		}
	}
	all := true
	for _, f := range out {
		all = all && f
	}
	if all && len(names) > 0 {
		key := "finetune.freeze"
		if fc.LinearProbe {
			key = "finetune.linear_probe"
		}
		return nil, &FreezeError{Err: cfgerr.New(key, "freezes every parameter of the model: nothing left to train")}
	}
	return out, nil
}

// FrozenNames is [FinetuneConfig.Frozen] on the parameters of the model
// that c describes, as the set of frozen names (nil when none is).
func FrozenNames(c Config) (map[string]bool, error) {
	shapes := layers.ParamShapes(c.Model)
	names := make([]string, len(shapes))
	for i, s := range shapes {
		names[i] = s.Name
	}
	frozen, err := c.Finetune.Frozen(names)
	if err != nil {
		return nil, err
	}
	var out map[string]bool
	for i, f := range frozen {
		if f {
			if out == nil {
				out = map[string]bool{}
			}
			out[names[i]] = true
		}
	}
	return out, nil
}

func matchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}
