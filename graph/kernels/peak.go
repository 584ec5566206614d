package kernels

import (
	"runtime"
	"sync"
	"time"
)

// A peak is the throughput of one instruction sequence of the products
// alone: threads goroutines, each locked to its own OS thread, run
// independent chains of it back to back from registers, with no load,
// store or dependence between them. No product built on that sequence can
// run faster, so a peak divided by a measured rate says how far from the
// CPU's ceiling the rate is, and whether a goal can be reached at all.

// peakLoop is a peak loop: run does n rounds, each of ops operations (2 a
// multiply-add).
type peakLoop struct {
	run func(n int)
	ops int
}

// The windows peakRate times: each runs peakRounds rounds on every thread.
const (
	peakWindows = 30
	peakRounds  = 1 << 19 // about 1.6 ms of VDPBF16PS's 24-instruction round on a 3.7 GHz Zen 5 core
)

// peakRate runs l on threads threads in peakWindows windows and returns
// the operations per second, in billions, of the fastest: the other
// processes on a shared machine can only slow a window down.
func peakRate(threads int, l peakLoop) float64 {
	best := time.Duration(-1)
	for range peakWindows {
		var ready, done sync.WaitGroup
		ready.Add(threads)
		gate := make(chan struct{})
		for range threads {
			done.Go(func() {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				ready.Done()
				<-gate
				l.run(peakRounds)
			})
		}
		ready.Wait() // the window times the loops, not the threads' start
		start := time.Now()
		close(gate)
		done.Wait()
		if d := time.Since(start); best < 0 || d < best {
			best = d
		}
	}
	return float64(threads) * float64(peakRounds) * float64(l.ops) / best.Seconds() / 1e9
}

// measurePeak is peakRate of l, or 0 and false where there is no loop or
// no thread.
func measurePeak(threads int, l peakLoop) (float64, bool) {
	if l.run == nil || threads < 1 {
		return 0, false
	}
	return peakRate(threads, l), true
}

// FP32Peak is the peak of the fused multiply-add the float32 products run
// on (VFMADD231PS on the vectors of ISA(): 8 lanes with AVX2, 16 with
// AVX-512), in GFLOP/s (2 a multiply-add) on threads threads; false on the
// Go kernels.
func FP32Peak(threads int) (gflops float64, ok bool) { return measurePeak(threads, fp32PeakLoop()) }

// Int8Peak is the peak of the int8 tile's arithmetic (Int8ISA "avx2": per
// row and group of 4 depths VPMADDUBSW, VPMADDWD and VPADDD on each half
// of a panel; weights within ±Int8WeightMax keep its int16 pair sums
// exact), in billions of integer operations a second (2 a multiply-add);
// false on the Go tile.
func Int8Peak(threads int) (gops float64, ok bool) { return measurePeak(threads, int8PeakLoop()) }

// Int8SaturatingPeak is the peak of the AVX2 uint8 × int8 kernel of ONNX
// Runtime (MLAS), the peer's ceiling on a CPU where ONNX Runtime runs it:
// AVX2 without AVX512BW, AVX-VNNI or AVX512-VNNI (elsewhere it runs other
// instructions, and this returns false). Its instructions are Int8Peak's:
// with full 8-bit weights its int16 pair sums saturate when both products
// are large, where ours, on 7-bit weights, cannot.
func Int8SaturatingPeak(threads int) (gops float64, ok bool) {
	return measurePeak(threads, int8SaturatingPeakLoop())
}
