package train

import (
	"fmt"
	"os"
	"path/filepath"

	"gonum.org/v1/plot/vg/vgimg"
)

// savePNG writes a canvas atomically (temp file + rename).
func savePNG(c *vgimg.Canvas, path string) error {
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
	return os.Rename(tmp.Name(), path)
}
