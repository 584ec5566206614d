package checkpoint

import (
	"fmt"
	"slices"
	"strings"
)

// ClassListError is returned when a data set's classes are not the ones a
// checkpoint's head was trained on (names and order): resuming or
// evaluating would silently give each head row another class's label.
type ClassListError struct {
	File       string   // the checkpoint (or state file)
	Checkpoint []string // its classes, in head order
	Data       []string // the data set's, in label order
}

func (e *ClassListError) Error() string {
	var diffs []string
	if only := minus(e.Data, e.Checkpoint); len(only) > 0 {
		diffs = append(diffs, "in the data set only: "+strings.Join(only, ", "))
	}
	if only := minus(e.Checkpoint, e.Data); len(only) > 0 {
		diffs = append(diffs, "in the checkpoint only: "+strings.Join(only, ", "))
	}
	if len(diffs) == 0 {
		for i := range min(len(e.Data), len(e.Checkpoint)) {
			if e.Data[i] != e.Checkpoint[i] {
				diffs = append(diffs, fmt.Sprintf("same names in another order (label %d is %q in the data set, %q in the checkpoint)", i, e.Data[i], e.Checkpoint[i]))
				break
			}
		}
	}
	return fmt.Sprintf("the data set's %d classes are not the %d the checkpoint %s was trained on (%s)",
		len(e.Data), len(e.Checkpoint), e.File, strings.Join(diffs, "; "))
}

// minus lists a's names that b lacks, in a's order.
func minus(a, b []string) []string {
	var out []string
	for _, s := range a {
		if !slices.Contains(b, s) {
			out = append(out, fmt.Sprintf("%q", s))
		}
	}
	return out
}

// CheckClasses compares the class list of the checkpoint file (head order,
// one name per output, "" for an output no class was trained on) with a
// data set's: the data set's classes must be the checkpoint's named ones,
// in the same order. A checkpoint with no class list is not checked.
func CheckClasses(file string, ckpt, data []string) error {
	if len(ckpt) == 0 {
		return nil
	}
	named := ckpt
	for len(named) > 0 && named[len(named)-1] == "" {
		named = named[:len(named)-1]
	}
	if slices.Equal(named, data) {
		return nil
	}
	return &ClassListError{File: file, Checkpoint: named, Data: data}
}

// HeadClasses is the class list a model file records for a head of n
// outputs trained on a data set's classes: those names, then "" for each
// output beyond them, so that the list always has one name per head row.
func HeadClasses(classes []string, n int) []string {
	out := make([]string, max(n, len(classes)))
	copy(out, classes)
	return out
}
