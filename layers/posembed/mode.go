package posembed

import "fmt"

// Mode is the interpolation kernel used by Resample.
type Mode int

// The interpolation modes; the zero value is Bicubic, timm's default.
const (
	Bicubic  Mode = iota // PyTorch mode="bicubic", align_corners=False
	Bilinear             // PyTorch mode="bilinear", align_corners=False
	Nearest              // PyTorch mode="nearest"
)

var modeNames = [...]string{Bicubic: "bicubic", Bilinear: "bilinear", Nearest: "nearest"}

// String returns the PyTorch name of the mode ("bicubic", "bilinear", "nearest").
func (m Mode) String() string {
	if m < 0 || int(m) >= len(modeNames) {
		return fmt.Sprintf("Mode(%d)", int(m))
	}
	return modeNames[m]
}

// ParseMode returns the mode named s, spelled as in PyTorch's F.interpolate.
func ParseMode(s string) (Mode, error) {
	for m, name := range modeNames {
		if s == name {
			return Mode(m), nil
		}
	}
	return 0, fmt.Errorf("unknown interpolation mode %q (want bicubic, bilinear or nearest)", s)
}

// Options selects the interpolation; the zero value is bicubic without antialiasing.
type Options struct {
	// Mode is the interpolation kernel; the zero value is Bicubic.
	Mode Mode
	// Antialias selects PyTorch's antialiased kernels (antialias=True in
	// F.interpolate and timm's default). Only Bicubic and Bilinear support it.
	Antialias bool
}

// Validate reports an unknown mode, or Antialias with Nearest.
func (o Options) Validate() error {
	if o.Mode < 0 || int(o.Mode) >= len(modeNames) {
		return fmt.Errorf("unknown interpolation mode %d", int(o.Mode))
	}
	if o.Antialias && o.Mode == Nearest {
		return fmt.Errorf("antialias is only supported with bicubic and bilinear, not %s", o.Mode)
	}
	return nil
}
