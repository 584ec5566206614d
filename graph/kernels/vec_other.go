//go:build !amd64 || purego

package kernels

// Without assembly the vector primitives are their Go versions.

func expVec(dst, src []float32)              { expGo(dst, src) }
func geluVec(dst, src []float32)             { geluGo(dst, src) }
func geluBackwardVec(dx, x, dy []float32)    { geluBackwardGo(dx, x, dy) }
func maxVec(x []float32) float32             { return maxGo(x) }
func axpyVec(alpha float32, x, y []float32)  { axpyGo(alpha, x, y) }
func scaleVec(alpha float32, x []float32)    { scaleGo(alpha, x) }
func addVec(dst, src []float32)              { addGo(dst, src) }
func biasGELUVec(y, b []float32) bool        { return false }
func biasResidualVec(y, b, r []float32) bool { return false }
func softmaxBackwardVec(dx, y, dy []float32, s float32) {
	softmaxBackwardGo(dx, y, dy, s)
}
func lnForwardVec(y, x, w, b []float32, mean, rstd float32) {
	lnForwardGo(y, x, w, b, mean, rstd)
}
func lnBackwardDxVec(dx, dy, x, w []float32, mean, rstd, c1, c2 float32) {
	lnBackwardDxGo(dx, dy, x, w, mean, rstd, c1, c2)
}

func softmaxRowsVec(x []float32, rows, cols int) { softmaxRowsGeneric(x, rows, cols) }

func sumVec(x []float32) float32                    { return sumGo(x) }
func dotVec(x, y []float32) float32                 { return dotGo(x, y) }
func sumSqDevVec(x []float32, mean float32) float32 { return sumSqDevGo(x, mean) }
func expSubSumVec(x []float32, m float32) float32   { return expSubSumGo(x, m) }
func lnBackwardSumsVec(dy, x, w, dw, db []float32, mean, rstd float32) (float32, float32) {
	return lnBackwardSumsGo(dy, x, w, dw, db, mean, rstd)
}
