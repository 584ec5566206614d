//go:build amd64 && !purego

package kernels

// int8Tile4x16AVX2 is int8TileGo on AVX2: the 4 bytes of a row,
// broadcast, less 128 (VPXOR 0x80); VPMADDUBSW multiplies their magnitude
// (VPABSB, at most 128) with a group of the panel given their signs
// (VPSIGNB) and adds pairs in int16 (at most 2·128·64: never saturating),
// VPMADDWD by ones adds the pairs in int32, VPADDD accumulates.
//
//go:noescape
func int8Tile4x16AVX2(k4 int, a0, a1, a2, a3 *uint8, b *int8, tile *[64]int32)

// int8Epilogue16AVX2 is int8Epilogue for 16 columns: the same operations
// in the same order (VPMULLD, VPSUBD, VCVTDQ2PS, VMULPS, VMULPS, VADDPS),
// so the same bits. bias nil: no addition.
//
//go:noescape
func int8Epilogue16AVX2(acc *int32, colSum *int32, scale *float32, bias *float32, zx int32, sx float32, y *float32)

// int8Epilogue16 runs the 16-column epilogue in assembly where it can and
// reports whether it did.
func int8Epilogue16(y []float32, acc []int32, sx float32, zx int32, w *PackedInt8, c0 int, b []float32) bool {
	if !hasAVX2 || len(y) != 16 {
		return false
	}
	var bp *float32
	if b != nil {
		bp = &b[c0 : c0+16][0]
	}
	int8Epilogue16AVX2(&acc[:16][0], &w.colSum[c0 : c0+16][0], &w.Scale[c0 : c0+16][0], bp, zx, sx, &y[0])
	return true
}

//go:noescape
func int8RowRangeAVX2(x *float32, n int) (lo, hi float32, bad uint32)

//go:noescape
func int8QuantizeAVX2(q *uint8, x *float32, n int, scale float32, zp int32)

// rowRange returns min(0, x…) and max(0, x…) and whether every value is
// finite.
func rowRange(x []float32) (lo, hi float32, finite bool) {
	n8 := len(x) &^ 7
	if hasAVX2 && n8 > 0 {
		var bad uint32
		lo, hi, bad = int8RowRangeAVX2(&x[0], n8)
		if bad != 0 {
			return 0, 0, false
		}
		x = x[n8:]
	}
	return rowRangeGo(x, lo, hi)
}

// quantizeValues sets q[d] = clamp(round(x[d] / scale) + zp, 0, 255).
func quantizeValues(q []uint8, x []float32, scale float32, zp int32) {
	n8 := len(x) &^ 7
	if hasAVX2 && n8 > 0 {
		int8QuantizeAVX2(&q[0], &x[0], n8, scale, zp)
		q, x = q[n8:], x[n8:]
	}
	quantizeValuesGo(q, x, scale, zp)
}

// int8PanelRaw4x16AVX2 computes and scales back rows4 groups of 4 rows of
// one full panel (16 columns): the tile and the epilogue in one call, with
// no buffer between them. a holds the quantized rows as they are (a_q,
// 0…255): with weights within ±Int8WeightMax (64), VPMADDUBSW's int16
// pairs, at most 2·255·64 = 32,640, never saturate, so the loop needs no
// sign step. Its sums are of a_q·q; zx holds the zero points less 128 (the
// tiles' convention), which it adds back.
//
//go:noescape
func int8PanelRaw4x16AVX2(k4, rows4 int, a *uint8, lda int, b *int8, colSum *int32, scale *float32, bias *float32, sx *float32, zx *int32, y *float32, ldy int)

// int8PanelRaw1x16AVX2 is int8PanelRaw4x16AVX2 on rows single rows, one
// after another: the same sums and epilogue, so the same bits, for the
// rows past a block's last four (197 tokens leave one) and one-row
// products (a class token's last block, the head) that would otherwise
// take a whole 4-row tile each.
//
//go:noescape
func int8PanelRaw1x16AVX2(k4, rows int, a *uint8, lda int, b *int8, colSum *int32, scale *float32, bias *float32, sx *float32, zx *int32, y *float32, ldy int)

// int8PanelRows runs the panel kernels over rows rows from row i of a full
// panel at column c0, the 4-row one on the first rows/4·4 and the 1-row one
// on the rest, and returns how many rows it did: all of them, or 0 where
// the CPU lacks AVX2. qx holds the quantized rows, kp bytes each.
func int8PanelRows(y []float32, ldy int, qx []uint8, kp int, sx []float32, zx []int32, w *PackedInt8, p, c0 int, b []float32, i, rows int) int {
	if !hasAVX2 || rows < 1 {
		return 0
	}
	var bp *float32
	if b != nil {
		bp = &b[c0 : c0+16][0]
	}
	_ = y[(i+rows-1)*ldy+c0+15] // the last row's panel is in y
	_ = qx[(i+rows)*kp-1]       // and its quantized row in qx
	bw, cs, sc := &w.data[p*kp*int8Panel], &w.colSum[c0 : c0+16][0], &w.Scale[c0 : c0+16][0]
	if rows4 := rows / 4; rows4 > 0 {
		int8PanelRaw4x16AVX2(kp/int8Group, rows4, &qx[i*kp], kp, bw, cs, sc, bp, &sx[i], &zx[i], &y[i*ldy+c0], ldy)
	}
	if j := i + rows/4*4; j < i+rows {
		int8PanelRaw1x16AVX2(kp/int8Group, i+rows-j, &qx[j*kp], kp, bw, cs, sc, bp, &sx[j], &zx[j], &y[j*ldy+c0], ldy)
	}
	return rows
}

// bestInt8Tile returns the fastest int8 tile this CPU runs.
func bestInt8Tile() int8TileFunc {
	if hasAVX2 {
		return int8Tile4x16AVX2
	}
	return int8TileGo
}

// Int8ISA names the int8 tile in use: "avx2" or "go".
func Int8ISA() string {
	if hasAVX2 {
		return "avx2"
	}
	return "go"
}
