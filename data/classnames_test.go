package data

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDuplicateClassNames: a class list that names one class twice —
// CIFAR's batches.meta.txt, class folders whose names differ only in case
// or surrounding spaces, an in-memory data set's list — is refused with a
// *DuplicateClassError naming the file (or folder) and the name; distinct
// names and "" entries pass.
func TestDuplicateClassNames(t *testing.T) {
	for _, tc := range []struct {
		names []string
		dup   string // "" : accepted
	}{
		{[]string{"cat", "dog"}, ""},
		{[]string{"cat", "", ""}, ""},
		{[]string{"cat", "dog", "cat"}, "cat"},
		{[]string{"Cat", "cat"}, "cat"},
		{[]string{"cat", " cat "}, " cat "},
		{[]string{"Ärger", "ärger"}, "ärger"},
	} {
		err := CheckClassNames("list.txt", tc.names)
		var de *DuplicateClassError
		if tc.dup == "" {
			if err != nil {
				t.Errorf("%q: %v", tc.names, err)
			}
			continue
		}
		if !errors.As(err, &de) || de.Name != tc.dup || de.File != "list.txt" || !strings.Contains(err.Error(), "list.txt") {
			t.Errorf("%q: %v, want a *DuplicateClassError for %q naming list.txt", tc.names, err, tc.dup)
		}
	}

	// CIFAR's class list file.
	root := t.TempDir()
	meta := filepath.Join(root, "batches.meta.txt")
	writeFile(t, meta, []byte("airplane\nautomobile\nbird\ncat\ndeer\ndog\nfrog\nhorse\nship\ncat\n"))
	_, err := readCIFARMeta(root)
	var de *DuplicateClassError
	if !errors.As(err, &de) || de.File != meta || de.Name != "cat" {
		t.Errorf("CIFAR meta naming cat twice: %v, want a *DuplicateClassError naming %s and cat", err, meta)
	}

	// Class folders differing only in case, or by a trailing space.
	for _, second := range []string{"Cat", "cat "} {
		root := writeFolder(t) // ant, bee, cat
		writeFile(t, filepath.Join(root, "train", second, "1.png"), encodeImage(t, "png-rgba", 0, 6, 5))
		if ents, err := os.ReadDir(filepath.Join(root, "train")); err != nil || len(ents) != 4 {
			t.Skipf("this file system cannot hold %q beside cat (%v)", second, err)
		}
		cfg := DefaultConfig()
		cfg.Name, cfg.Root = NameFolder, root
		_, err := Open(cfg, Train, 3, WithLogger(&recLogger{}))
		if !errors.As(err, &de) || de.File != filepath.Join(root, "train") || !strings.Contains(err.Error(), filepath.Join(root, "train")) {
			t.Errorf("train/cat and train/%q: %v, want a *DuplicateClassError naming the train folder", second, err)
		}
	}

	// An in-memory data set.
	if _, err := NewInMemory("mine", []string{"a", "b", "a"}, 1, 1, 1, []uint8{0}, []int{0}); !errors.As(err, &de) || de.Name != "a" {
		t.Errorf("in memory: %v, want a *DuplicateClassError for a", err)
	}
}
