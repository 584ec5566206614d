package plotfile

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

func testPlot(t *testing.T) *plot.Plot {
	t.Helper()
	p := plot.New()
	p.Title.Text = "t"
	l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 2}})
	if err != nil {
		t.Fatal(err)
	}
	p.Add(l)
	return p
}

// TestSavePlotMatchesPlotSave checks that SavePlot writes the bytes gonum's
// own p.Save writes, so figures regenerate byte for byte, and leaves no temp
// file behind.
func TestSavePlotMatchesPlotSave(t *testing.T) {
	dir := t.TempDir()
	want, got := filepath.Join(dir, "want.png"), filepath.Join(dir, "got.png")
	if err := testPlot(t).Save(60*vg.Millimeter, 40*vg.Millimeter, want); err != nil {
		t.Fatal(err)
	}
	if err := SavePlot(got, testPlot(t), 60*vg.Millimeter, 40*vg.Millimeter); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(want)
	b, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Errorf("SavePlot wrote %d bytes that differ from p.Save's %d", len(b), len(a))
	}
	if _, err := png.Decode(bytes.NewReader(b)); err != nil {
		t.Errorf("not a PNG: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("%d files in the directory, want 2 (no temp file left)", len(entries))
	}
}

func TestSavePNGErrorNamesPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "x.png")
	err := SavePlot(path, testPlot(t), 10*vg.Millimeter, 10*vg.Millimeter)
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("got %v, want an error naming %s", err, path)
	}
}
