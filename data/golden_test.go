package data

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// goldens mirrors data/testdata/goldens.json, made by
// experiments/goldens/data_goldens.py with torch and PIL.
type goldens struct {
	Torch  string `json:"torch"`
	PIL    string `json:"pil"`
	Resize []struct {
		C, H, W, OH, OW int
		Antialias       bool
		X, Y            []float64
	} `json:"resize"`
	PILOps struct {
		Images map[string]struct {
			C, H, W int
			Fill    []uint8
			Pix     []uint8
		} `json:"images"`
		Cases []struct {
			Image string
			Op    string
			Arg   float64
			Out   []uint8
		} `json:"cases"`
	} `json:"pil_ops"`
	Luma struct {
		RGB []uint8 `json:"rgb"`
		L   []uint8 `json:"l"`
	} `json:"luma"`
}

func loadGoldens(t *testing.T) *goldens {
	t.Helper()
	b, err := os.ReadFile("testdata/goldens.json")
	if err != nil {
		t.Fatal(err)
	}
	var g goldens
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return &g
}

func TestResizeMatchesTorch(t *testing.T) {
	g := loadGoldens(t)
	if len(g.Resize) == 0 {
		t.Fatal("no resize goldens")
	}
	for _, c := range g.Resize {
		x := make([]float32, len(c.X))
		for i, v := range c.X {
			x[i] = float32(v)
		}
		y := Resize(x, c.C, c.H, c.W, c.OH, c.OW, c.Antialias)
		if len(y) != len(c.Y) {
			t.Fatalf("%dx%d→%dx%d aa=%v: got %d values, want %d", c.H, c.W, c.OH, c.OW, c.Antialias, len(y), len(c.Y))
		}
		worst := 0.0
		for i := range y {
			worst = math.Max(worst, math.Abs(float64(y[i])-c.Y[i]))
		}
		if worst > 1e-5 {
			t.Errorf("%dx%dx%d→%dx%d aa=%v: max |diff| vs torch %g > 1e-5", c.C, c.H, c.W, c.OH, c.OW, c.Antialias, worst)
		}
	}
}

func TestRandAugmentOpsMatchPIL(t *testing.T) {
	g := loadGoldens(t)
	ops := map[string]func(Image, float64, []uint8){
		"AutoContrast":  func(im Image, _ float64, _ []uint8) { autoContrast(im) },
		"Equalize":      func(im Image, _ float64, _ []uint8) { equalize(im) },
		"Invert":        func(im Image, _ float64, _ []uint8) { invert(im) },
		"Posterize":     func(im Image, a float64, _ []uint8) { posterize(im, int(a)) },
		"Solarize":      func(im Image, a float64, _ []uint8) { solarize(im, int(a)) },
		"SolarizeAdd":   func(im Image, a float64, _ []uint8) { solarizeAdd(im, int(a), 128) },
		"Color":         func(im Image, a float64, _ []uint8) { enhanceColor(im, a) },
		"Contrast":      func(im Image, a float64, _ []uint8) { enhanceContrast(im, a) },
		"Brightness":    func(im Image, a float64, _ []uint8) { enhanceBrightness(im, a) },
		"Sharpness":     func(im Image, a float64, _ []uint8) { enhanceSharpness(im, a) },
		"Rotate":        rotate,
		"ShearX":        shearX,
		"ShearY":        shearY,
		"TranslateXRel": translateXRel,
		"TranslateYRel": translateYRel,
	}
	if len(g.PILOps.Cases) == 0 {
		t.Fatal("no PIL goldens")
	}
	for _, c := range g.PILOps.Cases {
		src := g.PILOps.Images[c.Image]
		img := Image{C: src.C, H: src.H, W: src.W, Pix: append([]uint8(nil), src.Pix...)}
		fn, ok := ops[c.Op]
		if !ok {
			t.Fatalf("no op %q", c.Op)
		}
		fn(img, c.Arg, src.Fill)
		bad, worst := 0, 0
		for i := range img.Pix {
			if d := int(img.Pix[i]) - int(c.Out[i]); d != 0 {
				bad++
				worst = max(worst, d, -d)
			}
		}
		if bad > 0 {
			t.Errorf("%s %s(%v): %d of %d pixels differ from PIL %s (max %d)", c.Image, c.Op, c.Arg, bad, len(img.Pix), g.PIL, worst)
		}
	}
}

func TestLumaMatchesPIL(t *testing.T) {
	g := loadGoldens(t)
	n := len(g.Luma.L)
	img := Image{C: 3, H: 1, W: n, Pix: g.Luma.RGB}
	got := convertChannels(img, 1)
	for i := range got.Pix {
		if got.Pix[i] != g.Luma.L[i] {
			t.Fatalf("pixel %d: luma %d, PIL %d", i, got.Pix[i], g.Luma.L[i])
		}
	}
}
