package main

import (
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

// Hand-computed rollouts with one head and one-hot attention rows.
func TestRolloutHandComputed(t *testing.T) {
	const tok = 4                     // CLS + 3 patches
	one := func(i, j int) []float64 { // attention matrix with row i on j, other rows on themselves
		a := identity(tok)
		a[i*tok+i] = 0
		a[i*tok+j] = 1
		return a
	}
	// One layer, CLS attends to token 2 (patch 2): Â row 0 = ½e0 + ½e2, so over
	// the patches (tokens 1…3) the rollout is all on patch 2.
	r, err := rollout([][]float64{one(0, 2)}, 1, 1, tok)
	if err != nil {
		t.Fatal(err)
	}
	if !near(r[0][1], 1) || !near(r[0][0], 0) || !near(r[0][2], 0) {
		t.Errorf("one layer: %v, want [0 1 0]", r[0])
	}
	// Layer 1: patch 2 (token 2) attends to token 1; layer 2: CLS attends to token 2.
	// Â1 row 2 = ½e2 + ½e1; Â2 row 0 = ½e0 + ½e2; R = Â2·Â1, row 0 = ½·Â1[0] + ½·Â1[2]
	// = ½e0 + ¼e2 + ¼e1 → over patches (tokens 1..3): [½, ½, 0].
	l1 := identity(tok)
	l1[2*tok+2], l1[2*tok+1] = 0, 1
	r, err = rollout([][]float64{l1, one(0, 2)}, 1, 1, tok)
	if err != nil {
		t.Fatal(err)
	}
	if !near(r[0][0], 0.5) || !near(r[0][1], 0.5) || !near(r[0][2], 0) {
		t.Errorf("two layers: %v, want [0.5 0.5 0]", r[0])
	}
	if _, err := rollout([][]float64{make([]float64, 3)}, 1, 1, tok); err == nil {
		t.Error("want an error for a short layer")
	}
}

func TestCLSAttentionMeanOverHeads(t *testing.T) {
	const tok = 3
	probs := []float64{ // (1, 2, 3, 3); only row 0 matters
		0.5, 0.5, 0, 0, 1, 0, 0, 0, 1, // head 0: CLS → self ½, patch 1 ½
		0, 0, 1, 0, 1, 0, 0, 0, 1, // head 1: CLS → patch 2
	}
	got := clsAttention(probs, 1, 2, tok)[0]
	// mean over heads over patches: [¼, ½] → renormalised [⅓, ⅔]
	if !near(got[0], 1.0/3) || !near(got[1], 2.0/3) {
		t.Errorf("got %v, want [1/3 2/3]", got)
	}
}

// TestReadme: the committed README is the template's rendering of the
// committed results.json.
func TestReadme(t *testing.T) { experiment.TestReadme(t, ".") }
