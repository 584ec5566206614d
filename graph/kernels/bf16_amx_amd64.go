//go:build amd64 && !purego

package kernels

import (
	"math"
	"sync"
	"syscall"

	"golang.org/x/sys/cpu"
)

// The bfloat16 product on AMX tiles (TDPBF16PS), in the order of
// sgemmBF16TileRef. It is not yet the product of train.precision bf16,
// whose definition is VDPBF16PS's order (sgemmBF16Ref); it is here to be
// pinned to its definition and measured (BenchmarkBF16AMX).

//go:noescape
func amxTiles32(cfg *byte, a *uint16, lda int, b *uint32, kb int, c *float32, ldc int, nb int)

// amxState is whether this process may use the tiles: the CPU has
// AMX-TILE and AMX-BF16 (GODEBUG=cpu.amxbf16=off clears it), and Linux
// granted the tile data state (arch_prctl ARCH_REQ_XCOMP_PERM, Linux 5.16
// and later).
var amxState struct {
	once sync.Once
	ok   bool
}

// amxCfg is the tile configuration: palette 1, tiles 0 to 7 of 16 rows
// of 64 bytes.
var amxCfg = func() (cfg [64]byte) {
	cfg[0] = 1
	for t := 0; t < 8; t++ {
		cfg[16+2*t] = 64
		cfg[48+t] = 16
	}
	return cfg
}()

// hasAMX reports whether the AMX kernel can run.
func hasAMX() bool {
	amxState.once.Do(func() {
		if !cpu.X86.HasAMXTile || !cpu.X86.HasAMXBF16 {
			return
		}
		const archReqXcompPerm, xfeatureXTileData = 0x1023, 18
		_, _, errno := syscall.RawSyscall(syscall.SYS_ARCH_PRCTL, archReqXcompPerm, xfeatureXTileData, 0)
		amxState.ok = errno == 0
	})
	return amxState.ok
}

// sgemmBF16AMX computes a checked product (m, n, k > 0, alpha ≠ 0) on
// AMX: op(A) converted to 32-row blocks of bfloat16 rows, op(B) to
// 16-column panels of pairs, both padded with zeros to whole tiles; each
// 32-row block runs over all of C's 32-column blocks in one call.
func sgemmBF16AMX(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, parallel bool) {
	kb := (k + tileBlock - 1) / tileBlock
	kw := kb * tileBlock // bfloat16 per row of A, padded
	mb := (m + 31) / 32
	nb := (n + 31) / 32
	npad := nb * 32
	ah := make([]uint16, mb*32*kw)
	bw := make([]uint32, npad*kw/2)
	par := parallel && m*n*k >= parallelMinWork
	packRowsAMX(ah, transA, m, k, kw, a, lda, par)
	packPanelsAMX(bw, transB, k, n, kw, npad, b, ldb, par)
	runAMX(ah, bw, m, n, k, alpha, beta, c, ldc, par)
}

// runAMX runs the tiles over the packed operands of sgemmBF16AMX.
func runAMX(ah []uint16, bw []uint32, m, n, k int, alpha, beta float32, c []float32, ldc int, par bool) {
	kb := (k + tileBlock - 1) / tileBlock
	kw := kb * tileBlock
	mb := (m + 31) / 32
	nb := (n + 31) / 32
	npad := nb * 32
	direct := alpha == 1 && beta == 0 && n == npad
	run := func(lo, hi int) {
		var scratch []float32
		if !direct || hi*32 > m {
			scratch = make([]float32, 32*npad)
		}
		for blk := lo; blk < hi; blk++ {
			i0 := blk * 32
			if direct && i0+32 <= m {
				amxTiles32(&amxCfg[0], &ah[i0*kw], 2*kw, &bw[0], kb, &c[i0*ldc], 4*ldc, nb)
				continue
			}
			amxTiles32(&amxCfg[0], &ah[i0*kw], 2*kw, &bw[0], kb, &scratch[0], 4*npad, nb)
			for i := i0; i < min(i0+32, m); i++ {
				acc := scratch[(i-i0)*npad : (i-i0)*npad+n]
				row := c[i*ldc : i*ldc+n]
				epilogueFTZ(row, acc, alpha, beta)
			}
		}
	}
	if par {
		parallelFor(mb, splitGrain(mb, 4, 1), 1, run)
	} else {
		run(0, mb)
	}
}

// epilogueFTZ sets row[j] to v = alpha·acc[j], or to beta·row[j] + v
// (fused) when beta ≠ 0, with fmaFTZ's rounding.
func epilogueFTZ(row, acc []float32, alpha, beta float32) {
	negZero := float32(math.Copysign(0, -1))
	for j, x := range acc {
		v := x
		if alpha != 1 {
			v = fmaFTZ(alpha, x, negZero)
		}
		if beta != 0 {
			v = fmaFTZ(beta, row[j], v)
		}
		row[j] = v
	}
}

// packRowsAMX sets dst's rows (kw bfloat16 each, mb·32 rows) to op(A)'s
// rows rounded to bfloat16; the padding is +0.
func packRowsAMX(dst []uint16, transA bool, m, k, kw int, a []float32, lda int, parallel bool) {
	rows := len(dst) / kw
	run := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out := dst[i*kw : (i+1)*kw]
			if i >= m {
				clear(out)
				continue
			}
			if transA {
				for p := 0; p < k; p++ {
					out[p] = ToBF16(a[p*lda+i])
				}
			} else {
				for p, x := range a[i*lda : i*lda+k] {
					out[p] = ToBF16(x)
				}
			}
			clear(out[k:])
		}
	}
	if parallel {
		parallelFor(rows, 64, 1, run)
	} else {
		run(0, rows)
	}
}

// packPanelsAMX sets dst to op(B)'s pairs in 16-column panels, panel q at
// dst[q·kw/2·16:], row r of it the pairs (B(2r, j), B(2r+1, j)); rows past
// k and columns past n are +0.
func packPanelsAMX(dst []uint32, transB bool, k, n, kw, npad int, b []float32, ldb int, parallel bool) {
	kp := kw / 2
	at := func(p, j int) float32 {
		if transB {
			return b[j*ldb+p]
		}
		return b[p*ldb+j]
	}
	run := func(lo, hi int) {
		for q := lo; q < hi; q++ {
			panel := dst[q*kp*16 : (q+1)*kp*16]
			for r := 0; r < kp; r++ {
				out := panel[r*16 : (r+1)*16]
				for jj := range out {
					j := q*16 + jj
					if j >= n || 2*r >= k {
						out[jj] = 0
						continue
					}
					var hi float32
					if 2*r+1 < k {
						hi = at(2*r+1, j)
					}
					out[jj] = pairBF16(at(2*r, j), hi)
				}
			}
		}
	}
	if parallel {
		parallelFor(npad/16, 1, 1, run)
	} else {
		run(0, npad/16)
	}
}
