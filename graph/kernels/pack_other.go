//go:build !amd64 || purego

package kernels

// packTrans reports that no assembly pack is available: the caller packs in Go.
func packTrans(dst []float32, ds int, src []float32, ss, valid, width, kc int) bool {
	return false
}
