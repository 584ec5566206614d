//go:build amd64 && !purego

package kernels

import "golang.org/x/sys/cpu"

//go:generate go run gen_dp_asm.go

// The bfloat16 products on AVX512_BF16's VDPBF16PS, for the CPUs that have
// it without AMX (AMD Zen 4 and later, Intel Cooper Lake): AMX's driver,
// packing and order, with the depth of each block of 32 permuted (dpPerm)
// and dpTiles32 in place of amxTiles32 (see gen_dp_asm.go).

//go:noescape
func dpTiles32(cfg *byte, a *uint16, lda int, b *uint32, kb int, c *float32, ldc int, nb int, pstride int, load int, rows int, kq int)

//go:noescape
func dpPeakLoop(n int)

// hasDP reports whether the VDPBF16PS tiles can run: AVX512_BF16 (its
// CPU flag avx512_bf16) and the AVX-512 the packing uses.
// GODEBUG=cpu.avx512bf16=off clears it (golang.org/x/sys/cpu honours the
// name; the runtime's own check warns that it does not know it);
// VIT_BF16_KERNEL=emulated is the quiet way to the emulation.
func hasDP() bool { return hasAVX512 && cpu.X86.HasAVX512BF16 }

// dpDepthBlocks is VDPBF16PS's depth per pass of a blocked product: the
// 32 columns of op(B) that a 4-row tile reads over it (16 KiB) stay in L1.
const dpDepthBlocks = 8

// dpFlatDepth is the deepest product VDPBF16PS runs flat. Its tiles read
// op(B) 32 columns at a time (2 KiB per block of depth) and keep C's sums in
// registers, so a wide op(B) costs little flat, while the passes store and
// reload all of C; only a deep product (a weight gradient over the tokens)
// gains from them.
const dpFlatDepth = 2048

// dpPaired is the VDPBF16PS backend.
var dpPaired = &pairTiles{name: "avx512bf16 4x32 (vdpbf16ps)", run: dpTiles32, perm: true, depthBlocks: dpDepthBlocks, flatDepth: dpFlatDepth,
	peak: dpPeakLoop, peakFLOPs: dpPeakFLOPs}

// dpPeakFLOPs is one round of dpPeakLoop: 24 VDPBF16PS of 16 lanes, each
// two multiply-adds.
const dpPeakFLOPs = 24 * 16 * 2 * 2

// amxPaired is the AMX backend.
var amxPaired = &pairTiles{name: "amx 32x32 (tdpbf16ps)", run: amxTiles32Rows, depthBlocks: amxDepthBlocks}

// amxTiles32Rows is amxTiles32 under pairTiles.run's contract: the tiles
// always run all 32 rows and all of the last block of depth.
func amxTiles32Rows(cfg *byte, a *uint16, lda int, b *uint32, kb int, c *float32, ldc int, nb int, pstride int, load int, _, _ int) {
	amxTiles32(cfg, a, lda, b, kb, c, ldc, nb, pstride, load)
}

// pickTiles is the paired backend that VIT_BF16_KERNEL (env) and the CPU
// allow: AMX, else VDPBF16PS, else none (the emulation). "emulated"
// forces the emulation, "vdpbf16ps" skips AMX.
func pickTiles(env string) *pairTiles {
	switch {
	case env == "emulated" || !hasAVX512:
		return nil
	case env != "vdpbf16ps" && hasAMX():
		return amxPaired
	case hasDP():
		return dpPaired
	}
	return nil
}

// allPairedTiles lists the paired backends this CPU (and Linux) can run,
// for tests.
func allPairedTiles() []*pairTiles {
	var pts []*pairTiles
	if hasAVX512 && hasAMX() {
		pts = append(pts, amxPaired)
	}
	if hasDP() {
		pts = append(pts, dpPaired)
	}
	return pts
}
