package posembed

import (
	"fmt"
	"math"

	"github.com/vitgo/vit/internal/interp"
)

// Resample resizes a position-embedding table from an oldH×oldW patch grid
// to newH×newW. pe is (numPrefix + oldH·oldW, dim) row-major; the result is
// (numPrefix + newH·newW, dim) with the numPrefix leading rows copied
// bitwise and the grid rows resampled channel by channel (see the package
// doc for the kernels). Sizes that do not fit pe, non-positive grids or dim,
// and an invalid opts are errors.
func Resample(pe []float32, dim, numPrefix, oldH, oldW, newH, newW int, opts Options) ([]float32, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("posembed: %w", err)
	}
	if dim < 1 || numPrefix < 0 || oldH < 1 || oldW < 1 || newH < 1 || newW < 1 {
		return nil, fmt.Errorf("posembed: need dim ≥ 1, numPrefix ≥ 0 and grids ≥ 1×1, got dim %d, numPrefix %d, %d×%d → %d×%d",
			dim, numPrefix, oldH, oldW, newH, newW)
	}
	want, ok := tableLen(dim, numPrefix, oldH, oldW)
	if !ok || len(pe) != want {
		return nil, fmt.Errorf("posembed: table has %d values, want (numPrefix %d + %d×%d grid) × dim %d",
			len(pe), numPrefix, oldH, oldW, dim)
	}
	outLen, ok := tableLen(dim, numPrefix, newH, newW)
	if !ok {
		return nil, fmt.Errorf("posembed: new table (numPrefix %d + %d×%d grid) × dim %d overflows", numPrefix, newH, newW, dim)
	}

	out := make([]float32, outLen)
	p := numPrefix * dim
	copy(out[:p], pe[:p]) // prefix (CLS) rows, bitwise
	grid := pe[p:]        // (oldH, oldW, D)
	if oldH == newH && oldW == newW {
		copy(out[p:], grid)
		return out, nil
	}

	g := make([]float64, len(grid))
	for i, v := range grid {
		g[i] = float64(v)
	}
	if newW != oldW { // (oldH, oldW, D) → (oldH, newW, D)
		g = resampleAxis(g, oldH, oldW, newW, dim, axisTaps(oldW, newW, opts))
	}
	if newH != oldH { // (oldH, newW·D) → (newH, newW·D)
		g = resampleAxis(g, 1, oldH, newH, newW*dim, axisTaps(oldH, newH, opts))
	}
	for i, v := range g {
		out[p+i] = float32(v)
	}
	return out, nil
}

// resampleAxis resizes the middle axis of in, laid out (outer, n, inner), to
// m samples with the taps of output j giving row j: (outer, n, inner) →
// (outer, m, inner).
func resampleAxis(in []float64, outer, n, m, inner int, taps *interp.Taps[float64]) []float64 {
	out := make([]float64, outer*m*inner)
	for o := range outer {
		src := in[o*n*inner : (o+1)*n*inner]
		dst := out[o*m*inner : (o+1)*m*inner]
		for j := range m {
			row := dst[j*inner : (j+1)*inner]
			for t := taps.Off[j]; t < taps.Off[j+1]; t++ {
				w, i := taps.W[t], taps.Idx[t]
				s := src[i*inner : (i+1)*inner]
				for k := range row {
					row[k] += w * s[k]
				}
			}
		}
	}
	return out
}

// tableLen returns (numPrefix + h·w)·dim, or false on overflow.
func tableLen(dim, numPrefix, h, w int) (int, bool) {
	if h > math.MaxInt/w {
		return 0, false
	}
	rows := h * w
	if rows > math.MaxInt-numPrefix {
		return 0, false
	}
	rows += numPrefix
	if rows > math.MaxInt/dim {
		return 0, false
	}
	return rows * dim, true
}
