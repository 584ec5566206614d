package posembed

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

var allOptions = []Options{
	{Mode: Bicubic},
	{Mode: Bicubic, Antialias: true},
	{Mode: Bilinear},
	{Mode: Bilinear, Antialias: true},
	{Mode: Nearest},
}

func randomTable(rows, dim int, seed uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, 1))
	pe := make([]float32, rows*dim)
	for i := range pe {
		pe[i] = float32(r.NormFloat64() * 0.02)
	}
	return pe
}

func TestSameGridIsIdentity(t *testing.T) {
	for _, o := range allOptions {
		pe := randomTable(1+5*3, 4, 1)
		got, err := Resample(pe, 4, 1, 5, 3, 5, 3, o)
		if err != nil {
			t.Fatal(err)
		}
		for i := range pe {
			if math.Float32bits(got[i]) != math.Float32bits(pe[i]) {
				t.Fatalf("%+v: value %d changed: %v → %v", o, i, pe[i], got[i])
			}
		}
	}
}

func TestConstantTableStaysConstant(t *testing.T) {
	const dim = 3
	grids := [][4]int{{4, 4, 7, 7}, {7, 7, 3, 3}, {3, 5, 8, 2}, {14, 14, 24, 24}, {9, 6, 2, 11}}
	for _, o := range allOptions {
		for _, g := range grids {
			rows := 1 + g[0]*g[1]
			pe := make([]float32, rows*dim)
			for i := range pe {
				pe[i] = []float32{0.25, -1.5, 3.1}[i%dim]
			}
			got, err := Resample(pe, dim, 1, g[0], g[1], g[2], g[3], o)
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range got {
				if want := pe[i%dim]; math.Abs(float64(v-want)) > 1e-6 {
					t.Fatalf("%+v %v: value %d = %v, want the constant %v", o, g, i, v, want)
				}
			}
		}
	}
}

// TestViTShapes resizes a timm (1, 197, D) table for a 14×14 grid to the
// (1, 577, D) of a 24×24 grid (224 → 384 pixels at patch 16), keeping CLS.
func TestViTShapes(t *testing.T) {
	const dim = 8
	pe := randomTable(197, dim, 2)
	for _, o := range allOptions {
		got, err := Resample(pe, dim, 1, 14, 14, 24, 24, o)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 577*dim {
			t.Fatalf("%+v: got %d values, want 577×%d", o, len(got), dim)
		}
		for i := range dim {
			if math.Float32bits(got[i]) != math.Float32bits(pe[i]) {
				t.Fatalf("%+v: CLS value %d changed: %v → %v", o, i, pe[i], got[i])
			}
		}
		back, err := Resample(got, dim, 1, 24, 24, 14, 14, o)
		if err != nil {
			t.Fatal(err)
		}
		if len(back) != 197*dim {
			t.Fatalf("%+v: back to 14×14 gives %d values, want 197×%d", o, len(back), dim)
		}
	}
}

func TestPrefixRowsBitwise(t *testing.T) {
	const dim, prefix = 5, 3
	pe := randomTable(prefix+6*4, dim, 3)
	pe[0] = float32(math.NaN()) // even a NaN in a prefix row is copied, not resampled
	pe[1] = float32(math.Copysign(0, -1))
	for _, o := range allOptions {
		got, err := Resample(pe, dim, prefix, 6, 4, 3, 9, o)
		if err != nil {
			t.Fatal(err)
		}
		for i := range prefix * dim {
			if math.Float32bits(got[i]) != math.Float32bits(pe[i]) {
				t.Fatalf("%+v: prefix value %d: %x → %x", o, i, math.Float32bits(pe[i]), math.Float32bits(got[i]))
			}
		}
		for i, v := range got[prefix*dim:] {
			if math.IsNaN(float64(v)) {
				t.Fatalf("%+v: grid value %d is NaN: the prefix leaked into the grid", o, i)
			}
		}
	}
}

// TestChannelsIndependent: resampling a D-channel table equals resampling
// each channel on its own, so channels are not mixed up by the layout.
func TestChannelsIndependent(t *testing.T) {
	const dim = 3
	pe := randomTable(1+5*4, dim, 4)
	for _, o := range allOptions {
		all, err := Resample(pe, dim, 1, 5, 4, 7, 3, o)
		if err != nil {
			t.Fatal(err)
		}
		for c := range dim {
			one := make([]float32, 0, 1+5*4)
			for r := range 1 + 5*4 {
				one = append(one, pe[r*dim+c])
			}
			got, err := Resample(one, 1, 1, 5, 4, 7, 3, o)
			if err != nil {
				t.Fatal(err)
			}
			for r, v := range got {
				if v != all[r*dim+c] {
					t.Fatalf("%+v: channel %d row %d: %v alone, %v in the table", o, c, r, v, all[r*dim+c])
				}
			}
		}
	}
}

// TestNearestPicksSources: nearest only copies grid values, in PyTorch's order.
func TestNearestPicksSources(t *testing.T) {
	// 1×4 → 1×2 picks columns floor(i·2) = 0, 2; 2×1 → 4×1 duplicates rows.
	pe := []float32{-1, 10, 11, 12, 13}
	got, err := Resample(pe, 1, 1, 1, 4, 1, 2, Options{Mode: Nearest})
	if err != nil {
		t.Fatal(err)
	}
	if want := []float32{-1, 10, 12}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	got, err = Resample([]float32{20, 21}, 1, 0, 2, 1, 4, 1, Options{Mode: Nearest})
	if err != nil {
		t.Fatal(err)
	}
	if want := []float32{20, 20, 21, 21}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestResampleErrors(t *testing.T) {
	pe := make([]float32, (1+4*4)*2)
	tests := []struct {
		name                                string
		pe                                  []float32
		dim, prefix, oldH, oldW, newH, newW int
		opts                                Options
		want                                string
	}{
		{"short table", pe[:len(pe)-1], 2, 1, 4, 4, 6, 6, Options{}, "table has 33 values"},
		{"long table", append(pe, 0), 2, 1, 4, 4, 6, 6, Options{}, "table has 35 values"},
		{"wrong prefix", pe, 2, 0, 4, 4, 6, 6, Options{}, "numPrefix 0"},
		{"wrong grid", pe, 2, 1, 3, 5, 6, 6, Options{}, "3×5 grid"},
		{"zero dim", pe, 0, 1, 4, 4, 6, 6, Options{}, "dim ≥ 1"},
		{"negative prefix", pe, 2, -1, 4, 4, 6, 6, Options{}, "numPrefix ≥ 0"},
		{"zero new height", pe, 2, 1, 4, 4, 0, 6, Options{}, "4×4 → 0×6"},
		{"negative new width", pe, 2, 1, 4, 4, 6, -2, Options{}, "grids ≥ 1×1"},
		{"zero old grid", nil, 2, 0, 0, 0, 6, 6, Options{}, "grids ≥ 1×1"},
		{"overflowing new grid", pe, 2, 1, 4, 4, math.MaxInt / 2, 3, Options{}, "overflows"},
		{"unknown mode", pe, 2, 1, 4, 4, 6, 6, Options{Mode: 7}, "unknown interpolation mode 7"},
		{"antialias nearest", pe, 2, 1, 4, 4, 6, 6, Options{Mode: Nearest, Antialias: true}, "antialias"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Resample(tc.pe, tc.dim, tc.prefix, tc.oldH, tc.oldW, tc.newH, tc.newW, tc.opts)
			if err == nil {
				t.Fatalf("no error, got %d values", len(got))
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not mention %q", err, tc.want)
			}
		})
	}
}

func TestParseMode(t *testing.T) {
	for _, m := range []Mode{Bicubic, Bilinear, Nearest} {
		got, err := ParseMode(m.String())
		if err != nil || got != m {
			t.Fatalf("ParseMode(%q) = %v, %v", m.String(), got, err)
		}
	}
	if _, err := ParseMode("area"); err == nil || !strings.Contains(err.Error(), `"area"`) {
		t.Fatalf("ParseMode(area): %v", err)
	}
	if s := Mode(9).String(); s != "Mode(9)" {
		t.Fatalf("Mode(9).String() = %q", s)
	}
}
