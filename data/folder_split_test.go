package data

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestFolderLinksIntoTheOtherSplit: a symbolic link, to a file or to a
// folder, that leads into the other split (or into another class) is
// skipped with a warning naming it, so no image is both trained and
// validated on nor listed under another label (a file link from
// train/cat into val/bee used to be trained on as a cat); a class folder
// or split folder that overlaps the other split is a *SplitOverlapError.
// A link to a file outside the data set is followed. Whatever the layout,
// no listed file's real path lies in the other split.
func TestFolderLinksIntoTheOtherSplit(t *testing.T) {
	type link struct{ at, to string } // relative to the root ("@pool…": a folder outside the data set)
	for _, tc := range []struct {
		name    string
		links   []link
		remove  []string // removed before the links are made
		split   Split
		outcome string // "skip": skipped with a warning naming the first link; "keep": listed; "overlap": *SplitOverlapError
	}{
		{"file into val, another class", []link{{"train/cat/z.png", "val/bee/w.png"}}, nil, Train, "skip"},
		{"file into val, same class", []link{{"train/cat/z.png", "val/cat/v.png"}}, nil, Train, "skip"},
		{"folder into val", []link{{"train/cat/sub", "val/bee"}}, nil, Train, "skip"},
		{"folder into val's class, same class", []link{{"train/cat/sub", "val/cat"}}, nil, Train, "skip"},
		{"file into train, from val", []link{{"val/cat/z.png", "train/ant/a.png"}}, nil, Val, "skip"},
		{"file into train, same class, from val", []link{{"val/cat/z.png", "train/cat/1.png"}}, nil, Val, "skip"},
		{"file into another class", []link{{"train/cat/z.png", "train/ant/a.png"}}, nil, Train, "skip"},
		{"file into val through a link to the root", []link{{"rootlink", "."}, {"train/cat/z.png", "rootlink/val/bee/w.png"}}, nil, Train, "skip"},
		{"file outside the data set", []link{{"train/cat/z.png", "@pool/p.png"}}, nil, Train, "keep"},
		{"file within its class", []link{{"train/cat/z.png", "train/cat/1.png"}}, nil, Train, "keep"},
		{"class folder into val", []link{{"train/dog", "val/bee"}}, nil, Train, "overlap"},
		{"val class folder into train", []link{{"val/cat", "train/cat"}}, []string{"val/cat"}, Val, "overlap"},
		{"val class folder into train, opening train", []link{{"val/cat", "train/cat"}}, []string{"val/cat"}, Train, "overlap"},
		{"val is train", []link{{"val", "train"}}, []string{"val"}, Val, "overlap"},
		{"val is train, opening train", []link{{"val", "train"}}, []string{"val"}, Train, "overlap"},
		{"train and val class folders are one", []link{{"train/dog", "@pool/d"}, {"val/dog", "@pool/d"}}, nil, Train, "overlap"},
		{"train and val class folders are one, opening val", []link{{"train/dog", "@pool/d"}, {"val/dog", "@pool/d"}}, nil, Val, "overlap"},
		{"val class folder inside a train one", []link{{"train/dog", "@pool"}, {"val/dog", "@pool/d"}}, nil, Val, "overlap"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := writeFolder(t)
			pool := t.TempDir()
			writeFile(t, filepath.Join(pool, "p.png"), encodeImage(t, "png-rgba", 0, 6, 5))
			writeFile(t, filepath.Join(pool, "d", "p.png"), encodeImage(t, "png-rgba", 0, 6, 5))
			for _, r := range tc.remove {
				if err := os.RemoveAll(filepath.Join(root, r)); err != nil {
					t.Fatal(err)
				}
			}
			for _, l := range tc.links {
				to := filepath.Join(root, l.to)
				if rest, ok := strings.CutPrefix(l.to, "@pool"); ok {
					to = filepath.Join(pool, rest)
				}
				if err := os.Symlink(to, filepath.Join(root, l.at)); err != nil {
					t.Fatal(err)
				}
			}
			at := filepath.Join(root, tc.links[len(tc.links)-1].at)
			cfg := DefaultConfig()
			cfg.Name, cfg.Root = NameFolder, root
			log := &recLogger{}
			ds, err := Open(cfg, tc.split, 3, WithLogger(log))
			var so *SplitOverlapError
			if tc.outcome == "overlap" {
				if !errors.As(err, &so) {
					t.Fatalf("%v, want a *SplitOverlapError", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			f := ds.(*Folder)
			listed := slices.Contains(f.files, at) || slices.ContainsFunc(f.files, func(p string) bool { return strings.HasPrefix(p, at+string(filepath.Separator)) })
			warned := strings.Contains(strings.Join(log.msgs, "\n"), at)
			switch tc.outcome {
			case "skip":
				if listed || !warned {
					t.Errorf("%s: listed %v, warned %v; want skipped with a warning naming it (%v)", at, listed, warned, log.msgs)
				}
			case "keep":
				if !listed || warned {
					t.Errorf("%s: listed %v, warned %v; want it listed (%v)", at, listed, warned, log.msgs)
				}
			}
			other := "val"
			if tc.split == Val {
				other = "train"
			}
			realOther, err := filepath.EvalSymlinks(filepath.Join(root, other))
			if err != nil {
				t.Fatal(err)
			}
			for i, p := range f.files {
				r, err := filepath.EvalSymlinks(p)
				if err != nil {
					t.Fatal(err)
				}
				if within(r, realOther) {
					t.Errorf("%s (%s) is in the other split", p, r)
				}
				if c := f.classes[f.labels[i]]; !strings.Contains(r, string(filepath.Separator)+c+string(filepath.Separator)) && !strings.HasPrefix(r, pool) {
					t.Errorf("%s (%s) labelled %s", p, r, c)
				}
			}
		})
	}
}
