//go:build !amd64 || purego

package kernels

// packTrans reports that no assembly pack is available: the caller packs in Go.
func packTrans(dst []float32, ds int, src []float32, ss, valid, width, kc int) bool {
	return false
}

// packFullPanels reports that no assembly pack is available.
func packFullPanels(dst, src []float32, ld, panels, kc, w int) bool { return false }

// packTransBlocks reports that it packed nothing: the caller packs in Go.
func packTransBlocks(dst []float32, ds int, src []float32, ss, valid, kc int) (rows, depth int) {
	return 0, 0
}

// packAVX2 is false: there is no assembly pack on this platform.
var packAVX2 = false
