// Package plotfile writes figures as PNG files: the one place where the
// trainer and the experiments turn a gonum/plot canvas into a file.
package plotfile

import (
	"fmt"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// SavePNG encodes c as a PNG and writes it to path atomically: into a temp
// file in the same directory, then renamed over path, so a reader never sees
// a half-written figure.
func SavePNG(path string, c *vgimg.Canvas) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*.png")
	if err != nil {
		return fmt.Errorf("png %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("png %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("png %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("png %s: %w", path, err)
	}
	return nil
}

// SavePlot draws p on a w × h canvas and saves it with [SavePNG]. The bytes
// are those of p.Save(w, h, path) for a .png path.
func SavePlot(path string, p *plot.Plot, w, h vg.Length) error {
	c := vgimg.New(w, h)
	p.Draw(draw.New(c))
	return SavePNG(path, c)
}
