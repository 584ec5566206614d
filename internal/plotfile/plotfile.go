// Package plotfile writes figures as PNG files: the one place where the
// trainer and the experiments turn a gonum/plot canvas into a file.
package plotfile

import (
	"fmt"
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/vitgo/vit/internal/atomicfile"
)

// SavePNG encodes c as a PNG and writes it to path atomically, mode 0644,
// through internal/atomicfile, so a reader never sees a half-written figure.
func SavePNG(path string, c *vgimg.Canvas) error {
	if err := atomicfile.Write(path, func(w io.Writer) error {
		_, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(w)
		return err
	}); err != nil {
		return fmt.Errorf("png: %w", err)
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
