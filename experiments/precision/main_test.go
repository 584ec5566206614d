package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/vitgo/vit/experiments/internal/harness"
)

// TestReadme: the committed README is the template's rendering of the
// committed results.json.
func TestReadme(t *testing.T) { experiment.TestReadme(t, ".") }

var (
	// named is a CPU named by its generation (or family and model) and, in
	// parentheses, its instruction set.
	named = regexp.MustCompile(`^(?:AMD EPYC Zen \d+|Intel Xeon, family \d+ model \d+) \([^)]*\b(?:AVX2|AVX-512)\b[^)]*\)$`)
	// dated is what a record must not narrate: a date, a clock time or a
	// commit.
	dated = regexp.MustCompile(`\b\d{4}-\d\d-\d\d\b|\b\d?\d:\d\d(?::\d\d|\s*UTC)\b|(?i:\bcommits?\s+[0-9a-f]{7,40}\b)`)
)

// TestEntriesNameCommandAndCPU: each machine is named by its generation
// and instruction set, each entry and agreement row names one of them (or
// the machine it ran on) and its commands, and the rendered README carries
// no date, clock time or commit: git keeps the history.
func TestEntriesNameCommandAndCPU(t *testing.T) {
	var rep harness.Report[results]
	if err := harness.ReadResults(".", &rep); err != nil {
		t.Fatal(err)
	}
	if msg := recordProblems(rep); msg != "" {
		t.Error(msg)
	}
	got, _, err := experiment.Rerender(".")
	if err != nil {
		t.Fatal(err)
	}
	if m := dated.Find(got); m != nil {
		t.Errorf("README.md narrates %q", m)
	}
}

// recordProblems returns what the record leaves unnamed, or "".
func recordProblems(rep harness.Report[results]) string {
	var probs []string
	known := func(cpu string) bool {
		for _, m := range rep.R.Machines {
			if strings.HasPrefix(cpu, m.CPU) {
				return true
			}
		}
		return false
	}
	for _, m := range rep.R.Machines {
		if !named.MatchString(m.CPU) {
			probs = append(probs, "machine "+m.CPU+": not named by generation and instruction set")
		}
	}
	for _, e := range rep.R.Entries {
		if !known(e.CPU) {
			probs = append(probs, e.Title+": CPU "+e.CPU+" is none of the machines")
		}
		if len(e.Commands) == 0 {
			probs = append(probs, e.Title+": no command")
		}
	}
	for _, a := range rep.R.Agreement {
		if !known(a.CPU) && !strings.Contains(a.CPU, "family ") && !strings.Contains(a.CPU, "Zen ") {
			probs = append(probs, a.Checkpoint+": CPU "+a.CPU+" is named by its brand alone")
		}
	}
	return strings.Join(probs, "; ")
}

// TestRecordProblems: the check refuses an entry without a command, a CPU
// named by its brand and a machine named without its instruction set.
func TestRecordProblems(t *testing.T) {
	zen5 := "AMD EPYC Zen 5 (AVX-512, AVX512_BF16, no AMX)"
	for _, tc := range []struct {
		name string
		r    results
		bad  bool
	}{
		{"named", results{Machines: []machine{{CPU: zen5}}, Entries: []entry{{Title: "t", CPU: zen5, Commands: []string{"go run x"}}}}, false},
		{"no command", results{Machines: []machine{{CPU: zen5}}, Entries: []entry{{Title: "t", CPU: zen5}}}, true},
		{"brand", results{Machines: []machine{{CPU: zen5}}, Entries: []entry{{Title: "t", CPU: "AMD EPYC", Commands: []string{"go run x"}}}}, true},
		{"machine brand", results{Machines: []machine{{CPU: "AMD EPYC"}}}, true},
		{"no instruction set", results{Machines: []machine{{CPU: "AMD EPYC Zen 5"}}}, true},
		{"agreement brand", results{Agreement: []agreement{{Checkpoint: "c", CPU: "AMD EPYC (2 logical CPUs)"}}}, true},
		{"agreement measured", results{Agreement: []agreement{{Checkpoint: "c", CPU: "AMD EPYC (family 25 model 1) (2 logical CPUs)"}}}, false},
	} {
		if got := recordProblems(harness.Report[results]{R: tc.r}); (got != "") != tc.bad {
			t.Errorf("%s: problems %q, want bad=%v", tc.name, got, tc.bad)
		}
	}
}
