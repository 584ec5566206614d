package main

import "testing"

// TestCommittedReadme: the committed README is what the template makes of
// the committed results.json.
func TestCommittedReadme(t *testing.T) {
	got, want, err := experiment.Rerender(".")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("README.md differs from the template's rendering of results.json:\n%s", got)
	}
}
