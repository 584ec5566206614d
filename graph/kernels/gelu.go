package kernels

// GELU sets dst[i] = x·Φ(x), x = src[i], the exact (erf) GELU that
// PyTorch's nn.GELU() computes: Φ(x) = (1 + erf(x/√2))/2. The relative
// error is below 1e-6 (Φ is evaluated through erfc, so it holds for x < 0
// too, down to where x·Φ(x) underflows). dst and src may be the same slice;
// their lengths must match.
func GELU(dst, src []float32) {
	checkLens("GELU", len(src), "dst", len(dst))
	if len(src) < parallelMinElems { // no closure: GELULinear calls this per row
		geluVec(dst, src)
		return
	}
	forElems(len(src), func(lo, hi int) { geluVec(dst[lo:hi], src[lo:hi]) })
}

// GELUBackward sets dx[i] = dy[i]·(Φ(x) + x·φ(x)), x = x[i], the gradient
// of GELU; φ is the standard normal density. The error is below 1e-6 of
// dy·(|Φ(x)| + |x·φ(x)|). dx may alias dy or x; all lengths must match.
func GELUBackward(dx, x, dy []float32) {
	checkLens("GELUBackward", len(x), "dx,dy", len(dx), len(dy))
	if len(x) < parallelMinElems { // no closure, as in GELU
		geluBackwardVec(dx, x, dy)
		return
	}
	forElems(len(x), func(lo, hi int) { geluBackwardVec(dx[lo:hi], x[lo:hi], dy[lo:hi]) })
}
