package main

import (
	"math"
	"testing"
)

// TestReadme: the committed README is the template's rendering of the
// committed results.json.
func TestReadme(t *testing.T) { experiment.TestReadme(t, ".") }

// TestCompare: top-1, agreement and cosines of logits against a reference.
func TestCompare(t *testing.T) {
	for _, tc := range []struct {
		name          string
		got, ref      []float32
		labels        []int
		top1, agree   float64
		minCos, maxAb float64
	}{
		{"same", []float32{1, 2, 3, 0}, []float32{1, 2, 3, 0}, []int{1, 0}, 100, 100, 1, 0},
		{"scaled agrees, cosine 1", []float32{2, 4, 6, 0}, []float32{1, 2, 3, 0}, []int{1, 1}, 50, 100, 1, 3},
		{"flipped", []float32{2, 1, 0, 3}, []float32{1, 2, 3, 0}, nil, -1, 0, 0, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := compare(tc.got, tc.ref, 2, tc.labels)
			if err != nil {
				t.Fatal(err)
			}
			if r.Images != 2 || r.Top1 != tc.top1 || r.Agree != tc.agree || math.Abs(r.MinCos-tc.minCos) > 1e-9 || r.MaxAbsLog != tc.maxAb {
				t.Errorf("got %+v, want top-1 %v agreement %v min cosine %v max |Δ| %v", r, tc.top1, tc.agree, tc.minCos, tc.maxAb)
			}
		})
	}
	if _, err := compare([]float32{1, 2, 3}, []float32{1, 2}, 2, nil); err == nil {
		t.Error("logits of different lengths: no error")
	}
}
