//go:build amd64 && !purego

package kernels

import "golang.org/x/sys/cpu"

//go:noescape
func fmaPeakAVX2(n int)

//go:noescape
func fmaPeakAVX512(n int)

//go:noescape
func int8PeakAVX2(n int)

// fp32PeakLoop is the FMA loop on ISA()'s vectors: 12 VFMADD231PS of 8
// lanes a round with AVX2, 24 of 16 with AVX-512.
func fp32PeakLoop() peakLoop {
	switch {
	case hasAVX512:
		return peakLoop{fmaPeakAVX512, 24 * 16 * 2}
	case hasAVX2:
		return peakLoop{fmaPeakAVX2, 12 * 8 * 2}
	}
	return peakLoop{}
}

// int8PeakLoop is the int8 tile's arithmetic, 4 rows of 64 multiply-adds
// a round.
func int8PeakLoop() peakLoop {
	if !hasAVX2 {
		return peakLoop{}
	}
	return peakLoop{int8PeakAVX2, 4 * 64 * 2}
}

// int8SaturatingPeakLoop is MLAS's AVX2 sequence, where MLAS would run it:
// the instructions of our own tile (its weights' 7 bits keep them exact).
func int8SaturatingPeakLoop() peakLoop {
	if !hasAVX2 || cpu.X86.HasAVX512BW || cpu.X86.HasAVXVNNI || cpu.X86.HasAVX512VNNI {
		return peakLoop{}
	}
	return peakLoop{int8PeakAVX2, 4 * 64 * 2}
}
