package data

import "github.com/vitgo/vit/internal/classnames"

// DuplicateClassError is a class list that names one class twice: two
// labels (or head outputs) would carry one name, and per-class results,
// the confusion matrix and a checkpoint's class check could not tell them
// apart. Names that differ only in letter case or surrounding spaces
// ("cat", "Cat ") are one name: folders so named merge on a
// case-insensitive file system and read alike in every report. It is
// internal/classnames' error, shared with checkpoint.
type DuplicateClassError = classnames.DuplicateError

// CheckClassNames returns a *DuplicateClassError naming file and the first
// name of names that repeats an earlier one (ignoring case and surrounding
// spaces); "" entries (head outputs no class was trained on) are not
// compared.
func CheckClassNames(file string, names []string) error { return classnames.Check(file, names) }
