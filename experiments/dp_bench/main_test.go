package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/vitgo/vit/experiments/internal/harness"
)

// The measured table names the machine it ran on above it.
func TestMeasuredTableNamesMachine(t *testing.T) {
	m := harness.Machine{CPU: "Test CPU 9000", Cores: 4, L2: "1 MiB per core", Backend: "native avx512 14x32", Vector: "AVX-512 and AVX2"}
	var b bytes.Buffer
	writeMeasured(&b, m, [][]string{{"tiny (d64 L4 h4, 28 px)", "205066", "128", "70.0 ms", "80.0 ms", "1.0–2.0 %", "0.50 ms"}})
	want := "Machine: Test CPU 9000 (4 logical CPUs, L2 1 MiB per core); ours: native avx512 14x32 SGEMM, AVX-512 and AVX2 vector kernels.\n\n" +
		"| model | params | global batch | 1 rank × 2 threads | 2 ranks × 1 thread | all-reduce share at 2 ranks | bare all-reduce |\n" +
		"|---|---|---|---|---|---|---|\n" +
		"| tiny (d64 L4 h4, 28 px) | 205066 | 128 | 70.0 ms | 80.0 ms | 1.0–2.0 % | 0.50 ms |\n\n"
	if got := b.String(); got != want {
		t.Errorf("measured table\n got %q\nwant %q", got, want)
	}
}

// -model alone models figures measured elsewhere: it names that machine,
// not this one.
func TestModelNamesItsMachine(t *testing.T) {
	var b bytes.Buffer
	if err := run([]string{"-model"}, &b); err != nil {
		t.Fatal(err)
	}
	first, rest, _ := strings.Cut(b.String(), "\n\n")
	want := "Step compute: `go run ./experiments/bench`'s TINY and SMALL steps (batch 128, 2 threads) on " +
		"AMD EPYC (2 logical CPUs, L2 not recorded); ours: native avx512 14x32 SGEMM, AVX-512 and AVX2 vector kernels; not measured by this run."
	if first != want {
		t.Errorf("first line\n got %q\nwant %q", first, want)
	}
	if !strings.HasPrefix(rest, "| model | step compute | link |") || strings.Count(rest, "\n| ") != 4 {
		t.Errorf("paper model table:\n%s", rest)
	}
}
