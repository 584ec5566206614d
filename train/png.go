package train

import (
	"fmt"
	"io"

	"gonum.org/v1/plot/vg/vgimg"

	"github.com/vitgo/vit/internal/atomicfile"
)

// savePNG writes a canvas atomically.
func savePNG(c *vgimg.Canvas, path string) error {
	if err := atomicfile.Write(path, func(w io.Writer) error {
		_, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(w)
		return err
	}); err != nil {
		return fmt.Errorf("png: %w", err)
	}
	return nil
}
