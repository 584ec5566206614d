package main

import (
	"fmt"
	"math"

	"github.com/vitgo/vit/experiments/internal/harness"
	"github.com/vitgo/vit/layers"
)

// posSim is the cosine similarity between every two patch position
// embeddings of a model: Sim[i*N+j] for patch positions i, j in row-major
// grid order (the class token's row 0 of pos_embed is left out).
type posSim struct {
	GH, GW int       // patch grid rows, columns
	Sim    []float64 // (N, N), N = GH·GW
}

// similarity reads pos_embed (1, 1+N, D) of m and returns the cosine
// similarities of its rows 1..N.
func similarity(m *layers.VisionTransformer) (posSim, error) {
	p := m.Param("pos_embed")
	if p == nil {
		return posSim{}, fmt.Errorf("model has no pos_embed")
	}
	gh, gw := m.Config.Grid()
	n, d := gh*gw, m.Config.EmbedDim
	if p.Shape.TotalSize() != (n+1)*d {
		return posSim{}, fmt.Errorf("pos_embed is %v, want (1, %d, %d)", p.Shape, n+1, d)
	}
	var rows []float64 // (1+N, D) as float64
	switch v := p.Value.Data().(type) {
	case []float32:
		rows = harness.Floats[float64](v)
	case []float64:
		rows = v
	default:
		return posSim{}, fmt.Errorf("pos_embed: unsupported dtype %v", p.Value.Dtype())
	}
	return cosine(rows[d:], n, d, gh, gw), nil
}

// cosine returns the similarities of the n rows of e (n, d).
func cosine(e []float64, n, d, gh, gw int) posSim {
	norm := make([]float64, n)
	for i := range n {
		var s float64
		for _, x := range e[i*d : (i+1)*d] {
			s += x * x
		}
		norm[i] = math.Sqrt(s)
	}
	sim := make([]float64, n*n)
	for i := range n {
		for j := range n {
			var s float64
			a, b := e[i*d:(i+1)*d], e[j*d:(j+1)*d]
			for k := range a {
				s += a[k] * b[k]
			}
			if den := norm[i] * norm[j]; den > 0 {
				sim[i*n+j] = max(-1, min(1, s/den)) // rounding can step past ±1
			}
		}
	}
	return posSim{GH: gh, GW: gw, Sim: sim}
}

// stripeStats summarises a similarity grid by the kind of pair. Every pair
// i < j of the positions kept is counted once; the distance is Euclidean on
// the patch grid.
type stripeStats struct {
	Neighbour float64 // pairs at distance 1 (4-neighbours)
	SameRow   float64 // same row, distance ≥ 2
	SameCol   float64 // same column, distance ≥ 2
	SameLine  float64 // same row or same column, distance ≥ 2
	OffLine   float64 // different row and column, distance ≥ 2
	// Matched is the mean over d = 2…max of [mean of same-line pairs at
	// distance d − mean of off-line pairs at distance in [d−½, d+½)]: the
	// stripe effect with distance (plain locality) taken out.
	Matched float64
	// MatchedRow and MatchedCol are Matched with only same-row or only
	// same-column pairs on the "same line" side.
	MatchedRow, MatchedCol float64
}

// Stripe is SameLine − OffLine: positive when same-row/column positions are
// more alike than others (part of it can be plain locality: off-line pairs
// are on average farther apart; Matched removes that).
func (s stripeStats) Stripe() float64 { return s.SameLine - s.OffLine }

// stats computes the stripe statistics over all positions.
func (p posSim) stats() stripeStats { return p.statsOf(func(int, int) bool { return true }) }

// interior computes them over the positions off the grid's outer ring
// (MNIST's borders are blank, so the ring's positions learn a shared
// "border" code that is not a row or column code).
func (p posSim) interior() stripeStats {
	return p.statsOf(func(r, c int) bool { return r > 0 && c > 0 && r < p.GH-1 && c < p.GW-1 })
}

// statsOf computes the statistics over the pairs of positions (r, c) that
// keep accepts.
func (p posSim) statsOf(keep func(r, c int) bool) stripeStats {
	n := p.GH * p.GW
	type acc struct{ sum, n float64 }
	var nb, row, col, off acc
	maxD := max(p.GH, p.GW)
	rowAt := make([]acc, maxD+1) // same row, by integer distance d
	colAt := make([]acc, maxD+1) // same column
	offAt := make([]acc, maxD+2) // by round(distance)
	for i := range n {
		ri, ci := i/p.GW, i%p.GW
		if !keep(ri, ci) {
			continue
		}
		for j := i + 1; j < n; j++ {
			rj, cj := j/p.GW, j%p.GW
			if !keep(rj, cj) {
				continue
			}
			dr, dc := math.Abs(float64(ri-rj)), math.Abs(float64(ci-cj))
			dist := math.Hypot(dr, dc)
			v := p.Sim[i*n+j]
			add := func(a *acc) { a.sum += v; a.n++ }
			switch {
			case dist == 1:
				add(&nb)
			case dr == 0:
				add(&row)
				add(&rowAt[int(dist)])
			case dc == 0:
				add(&col)
				add(&colAt[int(dist)])
			case dist >= 2:
				add(&off)
				if k := int(math.Floor(dist + 0.5)); k < len(offAt) {
					add(&offAt[k])
				}
			}
		}
	}
	mean := func(a acc) float64 {
		if a.n == 0 {
			return math.NaN()
		}
		return a.sum / a.n
	}
	// matched averages, over the distances where both sides have pairs,
	// mean(same side at d) − mean(off-line pairs at ≈ d).
	matched := func(same func(d int) acc) float64 {
		var m acc
		for d := 2; d <= maxD; d++ {
			if sd := same(d); sd.n > 0 && offAt[d].n > 0 {
				m.sum += mean(sd) - mean(offAt[d])
				m.n++
			}
		}
		return mean(m)
	}
	return stripeStats{Neighbour: mean(nb), SameRow: mean(row), SameCol: mean(col),
		SameLine: mean(acc{row.sum + col.sum, row.n + col.n}), OffLine: mean(off),
		Matched:    matched(func(d int) acc { return acc{rowAt[d].sum + colAt[d].sum, rowAt[d].n + colAt[d].n} }),
		MatchedRow: matched(func(d int) acc { return rowAt[d] }),
		MatchedCol: matched(func(d int) acc { return colAt[d] })}
}
