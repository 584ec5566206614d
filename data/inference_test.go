package data

import (
	"image"
	"image/color"
	"testing"
)

func TestCropResizeSize(t *testing.T) {
	// Expected sizes from torchvision's Resize(int) (short side, long side
	// truncated) and timm's ResizeKeepRatio (both sides rounded).
	for _, tc := range []struct {
		inH, inW, h, w int
		pct            float64
		rh, rw         int
	}{
		{100, 200, 16, 16, 0.875, 18, 36},
		{200, 100, 16, 16, 0.875, 36, 18},
		{375, 500, 224, 224, 0.875, 256, 341},
		{500, 375, 224, 224, 0.9, 330, 248},
		{28, 28, 28, 28, 1, 28, 28},
		{28, 28, 32, 32, 0.875, 36, 36},
		{100, 300, 20, 40, 0.8, 25, 75},  // ratio min(100/25, 300/50) = 4
		{300, 100, 20, 40, 0.8, 150, 50}, // ratio min(300/25, 100/50) = 2
	} {
		rh, rw := cropResizeSize(tc.inH, tc.inW, tc.h, tc.w, tc.pct)
		if rh != tc.rh || rw != tc.rw {
			t.Errorf("%dx%d → %dx%d at %v: %dx%d, want %dx%d", tc.inH, tc.inW, tc.h, tc.w, tc.pct, rh, rw, tc.rh, tc.rw)
		}
	}
}

func TestCenterCropWindow(t *testing.T) {
	// crop_pct 1 on an image already at the short side: no resize, only
	// the centred window; (7-4)/2 = 1.5 rounds half to even → 2.
	img := Image{C: 1, H: 4, W: 7, Pix: make([]uint8, 28)}
	for i := range img.Pix {
		img.Pix[i] = uint8(i)
	}
	out, err := CenterCrop(img, 4, 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []uint8{2, 3, 4, 5, 9, 10, 11, 12, 16, 17, 18, 19, 23, 24, 25, 26}
	for i, v := range want {
		if out.Pix[i] != v {
			t.Fatalf("crop %v, want %v", out.Pix, want)
		}
	}
	// 1e-300 and 1e-5 divide the target into a resize of +Inf or 1e10
	// pixels: an out-of-memory crash, refused instead.
	for _, pct := range []float64{0, -1, 1.01, 1e-300, 1e-5} {
		if _, err := CenterCrop(img, 4, 4, pct); err == nil {
			t.Errorf("crop_pct %v accepted", pct)
		}
	}
	// A sliver of an image: resized to 4×(4·40000) pixels is fine, to
	// 2000×(2000·40000) is not.
	sliver := Image{C: 1, H: 1, W: 40000, Pix: make([]uint8, 40000)}
	if _, err := CenterCrop(sliver, 4, 4, 1); err != nil {
		t.Errorf("a 40000×1 image at crop 4×4: %v", err)
	}
	if _, err := CenterCrop(sliver, 2000, 2000, 1); err == nil {
		t.Error("a 40000×1 image resized to 2000×80,000,000 was accepted")
	}
}

func TestFromImage(t *testing.T) {
	g := image.NewGray(image.Rect(2, 3, 5, 5))
	g.SetGray(2, 3, color.Gray{200})
	rgb, err := FromImage(g, 3)
	if err != nil || rgb.C != 3 || rgb.H != 2 || rgb.W != 3 || rgb.Pix[0] != 200 || rgb.Pix[6] != 200 || rgb.Pix[12] != 200 {
		t.Errorf("%+v %v", rgb, err)
	}
	if _, err := FromImage(g, 2); err == nil {
		t.Error("2 channels accepted")
	}
	if _, err := FromImage(image.NewGray(image.Rect(0, 0, 0, 3)), 1); err == nil {
		t.Error("empty image accepted")
	}
}
