package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// results is what a run of the experiment keeps in -out/results.json, so
// -replot can redraw the table, PNG and README without training again.
type results struct {
	Command string
	Wall    time.Duration
	Seeds   int
	BaseLR  float64
	Warmup  float64 // the recipe's optim.warmup_epochs as run
	Budget  runBudget
	Cells   []*cell
}

func saveResults(path string, r results) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	return nil
}

func loadResults(path string) (results, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return results{}, fmt.Errorf("-replot: %w", err)
	}
	var r results
	if err := json.Unmarshal(b, &r); err != nil {
		return results{}, fmt.Errorf("-replot: %s: %w", path, err)
	}
	if len(r.Cells) == 0 {
		return results{}, fmt.Errorf("-replot: %s holds no runs", path)
	}
	return r, nil
}

// axes returns the learning-rate multipliers and variants of cells in the
// order they first appear.
func axes(cells []*cell) ([]float64, []variant) {
	var mults []float64
	var vs []variant
	seenM, seenV := map[float64]bool{}, map[string]bool{}
	for _, c := range cells {
		if !seenM[c.LRMult] {
			seenM[c.LRMult] = true
			mults = append(mults, c.LRMult)
		}
		if !seenV[c.V.Name] {
			seenV[c.V.Name] = true
			vs = append(vs, c.V)
		}
	}
	return mults, vs
}
