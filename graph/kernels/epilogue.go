package kernels

// EpilogueRow finishes one row segment y of a product in place, serially
// and without allocating (it is called per block by SgemmPackedThen's
// epilogues): y += bias when bias is not nil (AddBias's sum), then y = r +
// y when r is not nil (Axpy(1, r, y)'s), then y = GELU(y) (exact erf form)
// when gelu is set. Each step is the per-element arithmetic of the exported
// kernel named, so the results are theirs bit for bit. bias and r, when
// given, must be as long as y.
//
// Where the CPU allows, the bias is added in the same pass as the residual
// or the GELU (biasResidualVec, biasGELUVec): the same arithmetic per
// element, one pass over y instead of two.
func EpilogueRow(y, bias, r []float32, gelu bool) {
	if bias != nil {
		checkLens("EpilogueRow", len(y), "bias", len(bias))
	}
	if r != nil {
		checkLens("EpilogueRow", len(y), "r", len(r))
	}
	switch {
	case bias != nil && r != nil && biasResidualVec(y, bias, r):
		bias, r = nil, nil
	case bias != nil && r == nil && gelu && biasGELUVec(y, bias):
		return
	}
	if bias != nil {
		addVec(y, bias)
	}
	if r != nil {
		axpyVec(1, r, y)
	}
	if gelu {
		geluVec(y, y)
	}
}
