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

// brand is a CPU's brand; named is the brand followed by its generation
// or its family and model, as harness.DescribeMachine and the records name
// it: one brand covers CPUs whose figures differ by the opposite sign.
var (
	brand = regexp.MustCompile(`\b(?:EPYC|Xeon)\b`)
	named = regexp.MustCompile(`\b(?:EPYC|Xeon)(?:\(R\))?\s+(?:Zen \d|\(family \d+ model \d+\)|[A-Z][a-z]+ Rapids|Platinum|Gold|Silver|Processor \(family)`)
	isa   = regexp.MustCompile(`\b(?:AVX2|AVX-512|AVX512_BF16|AMX)\b`)
)

// TestResultsNameTheirMachine: every table of the committed results names
// the CPU its numbers come from by its instruction set, and -model names
// the bench's machine, not this one.
func TestResultsNameTheirMachine(t *testing.T) {
	var rep harness.Report[results]
	if err := harness.ReadResults(".", &rep); err != nil {
		t.Fatal(err)
	}
	tables := []table{rep.R.Model}
	if rep.R.Measured != nil {
		tables = append(tables, *rep.R.Measured)
	}
	for _, tb := range tables {
		if !isa.MatchString(tb.Machine) || brand.MatchString(tb.Machine) && !named.MatchString(tb.Machine) {
			t.Errorf("machine %q is not named by its generation and instruction set", tb.Machine)
		}
	}

	r, err := measure("tiny", 1, true)
	if err != nil {
		t.Fatal(err)
	}
	if r.Measured != nil || r.Model.Machine != defaultModelMachine.String() || r.Model.Source != defaultModelSource {
		t.Errorf("-model: measured %v, machine %q, source %q", r.Measured, r.Model.Machine, r.Model.Source)
	}
	if m := r.Model.Machine; !isa.MatchString(m) || brand.MatchString(m) && !named.MatchString(m) {
		t.Errorf("-model's machine %q is not named by its generation and instruction set", m)
	}
	if len(r.Model.Rows) != 4 || !strings.HasPrefix(r.Model.Rows[0][0], "TINY") {
		t.Errorf("paper model rows %q", r.Model.Rows)
	}
}
