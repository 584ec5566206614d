package posembed

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// golden is testdata/golden.json, written by experiments/goldens/posembed_golden.py
// from PyTorch's F.interpolate.
type golden struct {
	Torch string `json:"torch"`
	Cases []struct {
		Name      string               `json:"name"`
		Dim       int                  `json:"dim"`
		NumPrefix int                  `json:"num_prefix"`
		Old       [2]int               `json:"old"`
		New       [2]int               `json:"new"`
		Input     []float32            `json:"input"`
		Outputs   map[string][]float32 `json:"outputs"`
	} `json:"cases"`
}

var goldenVariants = map[string]Options{
	"bicubic":     {Mode: Bicubic},
	"bicubic_aa":  {Mode: Bicubic, Antialias: true},
	"bilinear":    {Mode: Bilinear},
	"bilinear_aa": {Mode: Bilinear, Antialias: true},
	"nearest":     {Mode: Nearest},
}

func TestResampleMatchesTorch(t *testing.T) {
	raw, err := os.ReadFile("testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatalf("testdata/golden.json: %v", err)
	}
	if len(g.Cases) == 0 {
		t.Fatal("testdata/golden.json has no cases")
	}
	const tol = 1e-5
	for _, c := range g.Cases {
		if len(c.Outputs) != len(goldenVariants) {
			t.Fatalf("%s: %d outputs, want %d", c.Name, len(c.Outputs), len(goldenVariants))
		}
		for key, want := range c.Outputs {
			opts, ok := goldenVariants[key]
			if !ok {
				t.Fatalf("%s: unknown variant %q", c.Name, key)
			}
			t.Run(c.Name+"/"+key, func(t *testing.T) {
				got, err := Resample(c.Input, c.Dim, c.NumPrefix, c.Old[0], c.Old[1], c.New[0], c.New[1], opts)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(want) {
					t.Fatalf("len %d, want %d", len(got), len(want))
				}
				var worst float64
				for i := range got {
					d := math.Abs(float64(got[i]) - float64(want[i]))
					worst = max(worst, d)
					if d > tol {
						t.Fatalf("value %d (row %d, channel %d): got %.9g, torch %s gives %.9g (diff %.3g)",
							i, i/c.Dim, i%c.Dim, got[i], g.Torch, want[i], d)
					}
				}
				t.Logf("max |diff| vs torch %s: %.3g", g.Torch, worst)
			})
		}
	}
}
