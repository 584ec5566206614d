// Package classnames checks a list of class names for a name given twice:
// the data sets' class lists (data) and a checkpoint's head classes
// (checkpoint) share it, so that a checkpoint needs no data set to check
// its own metadata.
package classnames

import (
	"fmt"
	"strings"
)

// DuplicateError is a class list that names one class twice: two
// labels (or head outputs) would carry one name, and per-class results,
// the confusion matrix and a checkpoint's class check could not tell them
// apart. Names that differ only in letter case or surrounding spaces
// ("cat", "Cat ") are one name: folders so named merge on a
// case-insensitive file system and read alike in every report.
type DuplicateError struct {
	File          string // where the names come from: a class list file, a split folder, a checkpoint
	Name          string // the second spelling
	First, Second int    // their positions in the list
	FirstName     string // the first spelling
}

func (e *DuplicateError) Error() string {
	if e.Name == e.FirstName {
		return fmt.Sprintf("data: %s names the class %q twice (entries %d and %d): each class needs its own name", e.File, e.Name, e.First, e.Second)
	}
	return fmt.Sprintf("data: %s names the class %q twice, as %q (entry %d) and %q (entry %d): names differing only in case or surrounding spaces are one class",
		e.File, e.Name, e.FirstName, e.First, e.Name, e.Second)
}

// Check returns a *DuplicateError naming file and the first
// name of names that repeats an earlier one (ignoring case and surrounding
// spaces); "" entries (head outputs no class was trained on) are not
// compared.
func Check(file string, names []string) error {
	seen := make(map[string]int, len(names))
	for i, n := range names {
		if n == "" {
			continue
		}
		key := strings.ToLower(strings.TrimSpace(n))
		if j, ok := seen[key]; ok {
			return &DuplicateError{File: file, Name: n, First: j, Second: i, FirstName: names[j]}
		}
		seen[key] = i
	}
	return nil
}
