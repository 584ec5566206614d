//go:build jpegturbo && cgo

package data

import (
	"bytes"
	"errors"
	"image/jpeg"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/vitgo/vit/internal/synthimg"
)

// stdDecode decodes with image/jpeg only.
func stdDecode(t *testing.T, b []byte, c int) Image {
	t.Helper()
	m, err := jpeg.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return toCHW(m, c)
}

// TestTurboDecodesJPEGs checks that a jpegturbo build decodes JPEG files
// with libjpeg-turbo, close to image/jpeg (the two differ in IDCT rounding
// and chroma upsampling), and that a damaged file is still an error naming it.
func TestTurboDecodesJPEGs(t *testing.T) {
	if JPEGDecoder() != "libjpeg-turbo" {
		t.Fatalf("JPEGDecoder() = %q in a jpegturbo build", JPEGDecoder())
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "a.jpg")
	if err := synthimg.WriteJPEG(p, 375, 500, 3, 90); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []int{3, 1} {
		got, err := decodeImageFile(p, c, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := stdDecode(t, raw, c)
		if got.C != c || got.H != 500 || got.W != 375 {
			t.Fatalf("c=%d: decoded %dx%dx%d", c, got.C, got.H, got.W)
		}
		var sum, worst float64
		same := true
		for i := range want.Pix {
			d := math.Abs(float64(got.Pix[i]) - float64(want.Pix[i]))
			sum += d
			worst = max(worst, d)
			same = same && d == 0
		}
		mean := sum / float64(len(want.Pix))
		t.Logf("c=%d: libjpeg-turbo vs image/jpeg: mean |Δ| %.3f, max %v", c, mean, worst)
		if same {
			t.Fatalf("c=%d: libjpeg-turbo's output equals image/jpeg's: is it used?", c)
		}
		if mean > 1.5 || worst > 40 {
			t.Fatalf("c=%d: libjpeg-turbo differs from image/jpeg by mean %.3f, max %v", c, mean, worst)
		}
	}
	bad := filepath.Join(dir, "bad.jpg")
	if err := os.WriteFile(bad, raw[:len(raw)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = decodeImageFile(bad, 3, 0)
	if err == nil {
		t.Fatal("a truncated JPEG decoded without error")
	}
	if !bytes.Contains([]byte(err.Error()), []byte(bad)) {
		t.Fatalf("error %q does not name the file", err)
	}
	// The pixel limit still refuses from the header, before decoding: a
	// limit under the image's 187,500 pixels whose decoded-bytes bound
	// (BytesPerMaxPixel per pixel) still admits the file's size.
	var tooLarge *ImageTooLargeError
	if _, err := decodeImageFile(p, 3, 100_000); !errors.As(err, &tooLarge) {
		t.Fatalf("pixel limit: got %v", err)
	}
}
