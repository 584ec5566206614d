package train

import (
	"errors"
	"testing"

	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/internal/cfgerr"
)

// TestRRCConfigDefaultsAndRefusals: a config that turns
// random_resized_crop on without naming augment.interpolation resizes with
// bilinear_aa (timm's PIL resize), in the file or through -set; an explicit
// interpolation is kept; and an rrc_ratio that leaves no crop at the
// model's img_size is refused at config time (and so by -dry-run), naming
// augment.rrc_ratio and the line.
func TestRRCConfigDefaultsAndRefusals(t *testing.T) {
	const model = "model:\n  img_size: 28\n  patch_size: 4\n  in_chans: 1\n"
	for _, tc := range []struct {
		name    string
		src     string
		set     []string
		want    data.Interpolation
		errKey  string
		errLine int
	}{
		{"rrc, no interpolation", model + "augment:\n  random_resized_crop: true\n", nil, data.InterpBilinearAA, "", 0},
		{"rrc by -set", model, []string{"augment.random_resized_crop=true"}, data.InterpBilinearAA, "", 0},
		{"rrc, bilinear", model + "augment:\n  random_resized_crop: true\n  interpolation: bilinear\n", nil, data.InterpBilinear, "", 0},
		{"rrc, bilinear by -set", model + "augment:\n  random_resized_crop: true\n", []string{"augment.interpolation=bilinear"}, data.InterpBilinear, "", 0},
		{"no rrc", model, nil, data.InterpBilinear, "", 0},
		{"ratio 60", model + "augment:\n  random_resized_crop: true\n  rrc_ratio: [60, 60]\n", nil, "", "augment.rrc_ratio", 7},
		{"ratio 0.01", model + "augment:\n  random_resized_crop: true\n  rrc_ratio: [0.01, 0.01]\n", nil, "", "augment.rrc_ratio", 7},
		{"ratio NaN", model + "augment:\n  random_resized_crop: true\n  rrc_ratio: [.nan, 1]\n", nil, "", "augment.rrc_ratio", 7},
		{"scale inf", model + "augment:\n  random_resized_crop: true\n  rrc_scale: [0.5, .inf]\n", nil, "", "augment.rrc_scale", 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ParseConfig([]byte(tc.src), tc.set)
			if tc.errKey != "" {
				var ce *cfgerr.Error
				if !errors.As(err, &ce) || ce.Key != tc.errKey || ce.Line != tc.errLine {
					t.Fatalf("%v, want a *cfgerr.Error for %s at line %d", err, tc.errKey, tc.errLine)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.WithDefaults().Augment.Interpolation; got != tc.want {
				t.Errorf("interpolation %q, want %q", got, tc.want)
			}
			// The resolved config (config.yaml) reads back the same.
			b, err := cfg.YAML()
			if err != nil {
				t.Fatal(err)
			}
			back, err := ParseConfig(b, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := back.WithDefaults().Augment.Interpolation; got != tc.want {
				t.Errorf("resolved and read back: interpolation %q, want %q", got, tc.want)
			}
		})
	}
}
