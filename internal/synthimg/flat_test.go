package synthimg

import (
	"bytes"
	"image"
	"image/png"
	"testing"
)

// TestFlatPNG: FlatPNG's bytes are a PNG of the size asked, one colour.
func TestFlatPNG(t *testing.T) {
	b, err := FlatPNG(300, 200)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds() != image.Rect(0, 0, 300, 200) {
		t.Fatalf("bounds %v", img.Bounds())
	}
	if r, g, bl, a := img.At(299, 199).RGBA(); r>>8 != 200 || g>>8 != 30 || bl>>8 != 30 || a>>8 != 255 {
		t.Fatalf("colour %d %d %d %d", r>>8, g>>8, bl>>8, a>>8)
	}
	big, err := FlatPNG(7000, 7000)
	if err != nil || len(big) > 200_000 {
		t.Fatalf("7000×7000: %d bytes, %v; want under 200 KB", len(big), err)
	}
}
