package kernels

import (
	"os"
	"sync"
	"time"
)

// The VDPBF16PS kernel and the emulation give the same bits, so a product
// may run on either; it runs on the faster. VDPBF16PS does twice an FMA's
// multiply-adds per instruction but not necessarily per cycle: on some
// CPUs it issues at under half the FMA's rate, and the FMA emulation is
// faster. The choice is made once per process by timing one register tile
// of each, in cache (well under a millisecond); it moves no bit.

var bf16Pick struct {
	once sync.Once
	hw   *bf16Kernel
	amx  bool
}

// bf16Chosen returns the VDPBF16PS kernel when it is present and faster
// than the emulation, and nil when the products are emulated. The
// environment variable VIT_BF16_KERNEL=vdpbf16ps (where the CPU has it) or
// =emulated forces one, for the tests and benchmarks that compare them.
func bf16Chosen() *bf16Kernel {
	bf16Pick.once.Do(func() {
		switch os.Getenv("VIT_BF16_KERNEL") {
		case "vdpbf16ps":
			bf16Pick.hw = bf16HWKernel()
		case "emulated":
			bf16Pick.hw = nil
		default:
			bf16Pick.hw = pickBF16(bf16HWKernel(), emulKernel())
		}
	})
	return bf16Pick.hw
}

// pickBF16 returns hw when its tile runs at least 10 % more multiply-adds
// per second than emul's (best of 5 alternating rounds), else nil.
func pickBF16(hw *bf16Kernel, emul *gemmKernel) *bf16Kernel {
	if hw == nil {
		return nil
	}
	const kp = 256
	a := make([]uint32, hw.mr*kp)
	b := make([]uint32, hw.nr*kp)
	c := make([]float32, max(hw.mr*hw.nr, emul.mr*emul.nr))
	af := make([]float32, emul.mr*2*kp)
	bf := make([]float32, emul.nr*2*kp)
	mask := uint64(1)<<hw.nr - 1
	emask := uint64(1)<<emul.nr - 1
	best := func(f func()) float64 {
		t0 := time.Now()
		for range 8 {
			f()
		}
		return time.Since(t0).Seconds()
	}
	tHW, tEm := 1e9, 1e9
	for range 5 {
		tHW = min(tHW, best(func() { hw.fn(kp, &a[0], 1, &b[0], hw.mr, &c[0], hw.nr, 1, 0, hw.mr, mask) }))
		tEm = min(tEm, best(func() { emul.colA(2*kp, &af[0], emul.mr, &bf[0], emul.nr, &c[0], emul.nr, 1, 0, emul.mr, emask) }))
	}
	rateHW := float64(hw.mr*hw.nr) / tHW
	rateEm := float64(emul.mr*emul.nr) / tEm
	if rateHW >= 1.1*rateEm {
		return hw
	}
	return nil
}

// bf16AMX reports the experimental mode of SetBF16AMXExperiment.
func bf16AMX() bool {
	bf16Chosen()
	return bf16Pick.amx
}

// SetBF16AMXExperiment turns on (or off) an experimental mode in which the
// bfloat16 products (SgemmBF16, PackBBF16's) run on AMX tiles in
// TDPBF16PS's order (C + (e + o) per block of 16 pairs). That is not the
// definition of SgemmBF16: its bits differ from every other backend's, so
// no run, test or checkpoint may rely on it; experiments/bench turns it on
// (VIT_BF16_KERNEL=amx) to measure what AMX would give a step. It reports
// whether the mode is on: false where the CPU or Linux lacks AMX. Call it
// before any product runs.
func SetBF16AMXExperiment(on bool) bool {
	bf16Chosen()
	bf16Pick.amx = on && hasAMX()
	return bf16Pick.amx
}

// BF16Backend names the kernel the bfloat16 products run on: the
// VDPBF16PS tile, or the FMA tile of the emulation (same bits either way).
func BF16Backend() string {
	if bf16AMX() {
		return "amx 32x32 (experimental: TDPBF16PS order, not SgemmBF16's bits)"
	}
	if hw := bf16Chosen(); hw != nil {
		return hw.name + " (vdpbf16ps)"
	}
	return emulKernel().name + " (emulated)"
}
