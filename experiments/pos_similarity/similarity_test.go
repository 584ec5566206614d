package main

import (
	"math"
	"testing"
)

// lineEmbed builds n = g·g position embeddings of width 2g: a one-hot row
// code and a one-hot column code, so positions sharing a row or column have
// cosine ½ and all others 0.
func lineEmbed(g int) []float64 {
	d := 2 * g
	e := make([]float64, g*g*d)
	for i := range g * g {
		e[i*d+i/g] = 1
		e[i*d+g+i%g] = 1
	}
	return e
}

func TestCosineLineCode(t *testing.T) {
	const g = 4
	p := cosine(lineEmbed(g), g*g, 2*g, g, g)
	for i := range g * g {
		for j := range g * g {
			want := 0.0
			switch {
			case i == j:
				want = 1
			case i/g == j/g || i%g == j%g:
				want = 0.5
			}
			if got := p.Sim[i*g*g+j]; math.Abs(got-want) > 1e-12 {
				t.Fatalf("sim(%d,%d) = %v, want %v", i, j, got, want)
			}
		}
	}
	s := p.stats()
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"neighbour", s.Neighbour, 0.5}, {"same row", s.SameRow, 0.5}, {"same column", s.SameCol, 0.5},
		{"same line", s.SameLine, 0.5}, {"off line", s.OffLine, 0},
		{"stripe", s.Stripe(), 0.5}, {"matched", s.Matched, 0.5},
		{"matched rows", s.MatchedRow, 0.5}, {"matched columns", s.MatchedCol, 0.5},
	} {
		if math.Abs(c.got-c.want) > 1e-12 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// Positions on the outer ring that share a code look like stripes over the
// whole grid (the ring's rows and columns are all ring) but not in the interior.
func TestInteriorIgnoresBorderCode(t *testing.T) {
	const g, d = 7, 64
	e := make([]float64, g*g*d)
	for i := range g * g {
		r, c := i/g, i%g
		if r == 0 || c == 0 || r == g-1 || c == g-1 {
			e[i*d] = 1 // the shared border code
		} else {
			e[i*d+1+i] = 1 // interior: orthogonal codes
		}
	}
	p := cosine(e, g*g, d, g, g)
	if all := p.stats(); !(all.Matched > 0.1) {
		t.Errorf("whole grid: matched stripe score %v, want > 0.1 from the ring", all.Matched)
	}
	in := p.interior()
	if in.Matched != 0 || in.SameLine != 0 || in.OffLine != 0 {
		t.Errorf("interior: %+v, want all zero", in)
	}
}

// A code of the row alone: same-row pairs are identical, same-column pairs
// and others orthogonal, so only the row score is positive.
func TestRowCodeOnly(t *testing.T) {
	const g = 5
	e := make([]float64, g*g*g)
	for i := range g * g {
		e[i*g+i/g] = 1
	}
	s := cosine(e, g*g, g, g, g).stats()
	if !near(s.MatchedRow, 1) || !near(s.MatchedCol, 0) || !near(s.Matched, 0.5) {
		t.Errorf("row %v col %v all %v, want 1, 0, 0.5", s.MatchedRow, s.MatchedCol, s.Matched)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

// TestReadme: the committed README is the template's rendering of the
// committed results.json.
func TestReadme(t *testing.T) { experiment.TestReadme(t, ".") }
