//go:build !amd64 || purego

package kernels

func bestInt8Tile() int8TileFunc { return int8TileGo }

// Int8ISA names the int8 tile in use: "go" on this build.
func Int8ISA() string { return "go" }

func int8Epilogue16(y []float32, acc []int32, sx float32, zx int32, w *PackedInt8, c0 int, b []float32) bool {
	return false
}

func rowRange(x []float32) (lo, hi float32, finite bool) { return rowRangeGo(x, 0, 0) }

func quantizeValues(q []uint8, x []float32, scale float32, zp int32) {
	quantizeValuesGo(q, x, scale, zp)
}

func int8PanelRows(y []float32, ldy int, qx []uint8, kp int, sx []float32, zx []int32, w *PackedInt8, p, c0 int, b []float32, i, rows int) int {
	return 0
}
