package posembed

import "github.com/vitgo/vit/internal/interp"

// axisTaps returns, for each of the m output positions along an axis of n
// input samples, the input samples and weights PyTorch's CPU kernel uses,
// with the weights in float64 (the resampling accumulates in float64).
func axisTaps(n, m int, o Options) *interp.Taps[float64] {
	if o.Antialias {
		if o.Mode == Bilinear {
			return interp.BilinearAA[float64](n, m)
		}
		return interp.BicubicAA[float64](n, m)
	}
	switch o.Mode {
	case Bilinear:
		return interp.Bilinear[float64](n, m)
	case Nearest:
		return interp.Nearest[float64](n, m)
	}
	return interp.Bicubic[float64](n, m)
}
