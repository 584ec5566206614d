package data_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/vitgo/vit/data"
)

// TestDocsListEveryDataset: docs/configuration.md's data.name row lists the
// table's names in its order, and each has its paragraph of where its files
// go (a bullet naming `name: X`).
func TestDocsListEveryDataset(t *testing.T) {
	b, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	checkDatasetDocs(t, string(b), data.Datasets())
}

// TestDocsCheckCatchesAMissingDataset: the check fails on a table row the
// docs do not list, and on a name the docs list that has no row.
func TestDocsCheckCatchesAMissingDataset(t *testing.T) {
	b, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := data.Datasets()
	for _, tc := range []struct {
		name string
		rows []data.DatasetInfo
	}{
		{"a row the docs miss", append(slices.Clone(rows), data.DatasetInfo{Name: "imagenet_tar"})},
		{"a listed name with no row", rows[:len(rows)-1]},
	} {
		var ft fakeT
		checkDatasetDocs(&ft, string(b), tc.rows)
		if !ft.failed {
			t.Errorf("%s: the check passed", tc.name)
		}
	}
}

type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Helper()               {}
func (f *fakeT) Errorf(string, ...any) { f.failed = true }
func (f *fakeT) Fatalf(string, ...any) { f.failed = true }
func (f *fakeT) Logf(string, ...any)   {}
func (f *fakeT) Error(...any)          { f.failed = true }

var nameRow = regexp.MustCompile("(?m)^\\| `name` \\| `mnist` \\| which data set: ([^|]*)\\|")

func checkDatasetDocs(t testing.TB, md string, rows []data.DatasetInfo) {
	t.Helper()
	m := nameRow.FindStringSubmatch(md)
	if m == nil {
		t.Fatalf("docs/configuration.md has no data.name row")
		return
	}
	listed := regexp.MustCompile("`([a-z0-9_]+)`").FindAllStringSubmatch(m[1], -1)
	var got, want []string
	for _, l := range listed {
		got = append(got, l[1])
	}
	for _, r := range rows {
		want = append(want, string(r.Name))
		if !strings.Contains(md, "(`name: "+string(r.Name)+"`") {
			t.Errorf("docs/configuration.md has no paragraph (`name: %s`, …) on where its files go", r.Name)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("docs/configuration.md lists the data sets %v; the table (data.Datasets) has %v", got, want)
	}
}
