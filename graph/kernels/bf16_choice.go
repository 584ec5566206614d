package kernels

import (
	"fmt"
	"os"
	"strings"
	"sync"
)

// The bfloat16 products run on paired tiles where the CPU and Linux allow
// it, AMX's (TDPBF16PS) or else AVX512_BF16's (VDPBF16PS), and on the
// emulation (the FTZ float32 tiles, bf16_tile_emul.go) elsewhere; all give
// sgemmBF16Ref's bits. The environment variable VIT_BF16_KERNEL=emulated
// forces the emulation, =vdpbf16ps skips AMX, and =amx asks for AMX, for
// the tests and benchmarks that compare them. The products themselves run
// the next backend down where the one named is missing; the commands
// refuse to start with such a value (CheckBF16KernelEnv).

// pairTiles is a backend of the products on pairs of depth: AMX's tiles,
// or VDPBF16PS's register tiles on operands whose depth is permuted.
type pairTiles struct {
	name string
	// run is amxTiles32's contract: 32 rows of A (lda bytes apart) times
	// nb blocks of 32 columns of B's 16-column panels (pstride bytes
	// apart), over kb blocks of 32 of depth, into C (ldc bytes), from zero
	// (load 0) or from C (load 1). Only C's first rows (1 to 32) are
	// needed: a backend may skip the others (VDPBF16PS runs 4 rows at a
	// time), or compute them from A's padding, so all 32 must be writable.
	// Of the last block of depth only the first kq steps of 4 (1 to 8) are
	// needed (depthSteps): the rest is +0 padding, which a backend may skip
	// as VDPBF16PS does, or multiply as AMX does.
	run  func(cfg *byte, a *uint16, lda int, b *uint32, kb int, c *float32, ldc int, nb int, pstride int, load int, rows, kq int)
	perm bool // the depth of each block of 32 permuted by dpPerm
	// depthBlocks is the blocks of 32 of depth per pass of a blocked
	// product (runAMXBlocked): op(B)'s part of a pass must stay in the
	// cache the tiles read it from.
	depthBlocks int
	// flatDepth, when not 0, is the deepest product (in bfloat16, padded)
	// that runs flat whatever op(B)'s size; 0: flat while op(B)'s panels
	// are within amxReach.
	flatDepth int
	// peak, when not nil, runs n rounds of peakFLOPs each of the tiles'
	// instruction alone, on registers, with no dependence between its
	// chains: its throughput (BF16Peak). nil where no such loop is
	// written (AMX).
	peak      func(n int)
	peakFLOPs int
}

// depthSteps is the steps of 4 of depth (1 to 8) a product of depth k
// needs in its last block of 32: pairTiles.run's kq.
func depthSteps(k int) int { return (k-1)%tileBlock/4 + 1 }

// dpPerm is the order in which VDPBF16PS's tiles read each block of 32 of
// depth: pair q < 8 is (4q+2, 4q), two steps of AMX's even chain (the
// instruction adds the high half's product first), pair 8+q is (4q+3,
// 4q+1), the odd chain's. Word i of a permuted block is word dpPerm[i].
var dpPerm = [tileBlock]int{2, 0, 6, 4, 10, 8, 14, 12, 18, 16, 22, 20, 26, 24, 30, 28, 3, 1, 7, 5, 11, 9, 15, 13, 19, 17, 23, 21, 27, 25, 31, 29}

// BF16KernelEnv is the environment variable that picks the bfloat16
// products' backend: amx, vdpbf16ps or emulated; unset, the fastest the
// CPU has.
const BF16KernelEnv = "VIT_BF16_KERNEL"

// CheckBF16KernelEnv returns an error naming BF16KernelEnv and its value
// unless it is unset, amx, vdpbf16ps or emulated. Any other value is
// ignored by the products (they run on the default backend), so a command
// refuses to start with one rather than run something it did not ask for.
// A kernel this CPU (or Linux, or the build) cannot run — amx without AMX,
// vdpbf16ps without AVX512_BF16 — is a *BF16KernelError naming the CPU
// flags it lacks: the products would silently run another backend.
func CheckBF16KernelEnv() error {
	switch v := os.Getenv(BF16KernelEnv); v {
	case "", "emulated":
		return nil
	case "amx", "vdpbf16ps":
		if miss := bf16Missing(v); len(miss) > 0 {
			return &BF16KernelError{Value: v, Missing: miss}
		}
		return nil
	default:
		return fmt.Errorf("environment variable %s=%q: want amx, vdpbf16ps or emulated, or leave it unset for the fastest backend the CPU has", BF16KernelEnv, v)
	}
}

// BF16KernelError is a BF16KernelEnv naming a bfloat16 kernel this CPU (or
// Linux, or the build) cannot run.
type BF16KernelError struct {
	Value   string   // the variable's value: amx or vdpbf16ps
	Missing []string // what the CPU lacks, by CPU flag (AVX512_BF16, AMX_TILE, …)
}

func (e *BF16KernelError) Error() string {
	return fmt.Sprintf("environment variable %s=%s: this CPU cannot run that bfloat16 kernel (it lacks %s); unset %s for the fastest backend it has, or set it to emulated",
		BF16KernelEnv, e.Value, strings.Join(e.Missing, ", "), BF16KernelEnv)
}

// Emulated bf16's cost against fp32 on a CPU without a bfloat16
// instruction: docs/precision.md, "When bf16 is faster", names the CPU and
// experiments/precision holds the record.
const bf16EmulatedCost = "about 4-5x fp32's CPU time in training and 2.6x in evaluation"

// BF16KernelNote is the line a command logs when its products run in bf16
// (at start and in -dry-run): the kernel they run on. warn is true when
// that is the emulation because the CPU has no bfloat16 instruction
// (neither AVX512_BF16 nor AMX): the line then says how much slower than
// fp32 it is. The emulation asked for (VIT_BF16_KERNEL=emulated) is no
// warning.
func BF16KernelNote() (line string, warn bool) {
	if pt := bf16Tiles(); pt != nil {
		return "bf16 kernel: " + pt.name, false
	}
	name := emulKernel().name
	if os.Getenv(BF16KernelEnv) == "emulated" {
		return fmt.Sprintf("bf16 kernel: %s (emulated, as %s=emulated asks)", name, BF16KernelEnv), false
	}
	return fmt.Sprintf("bf16 kernel: %s (emulated): this CPU has no bfloat16 instruction (it lacks %s), so bf16 products are emulated on float32 FMAs, %s; precision fp32 is faster here",
		name, strings.Join(bf16Missing("vdpbf16ps"), ", "), bf16EmulatedCost), true
}

var bf16Pick struct {
	once  sync.Once
	tiles *pairTiles
}

// bf16Tiles returns the paired backend the bfloat16 products run on, or
// nil for the emulation: AMX or VDPBF16PS as pickTiles allows, while
// AVX-512 (the packing's) is on (GODEBUG=cpu.avx512f=off turns it off).
func bf16Tiles() *pairTiles {
	bf16Pick.once.Do(func() {
		bf16Pick.tiles = pickTiles(os.Getenv(BF16KernelEnv))
	})
	if !hasAVX512 {
		return nil
	}
	return bf16Pick.tiles
}

// BF16Peak measures the throughput of the instruction the bfloat16
// products run on, alone (peakRate): its GFLOP/s (2 FLOPs a multiply-add)
// and true; false where the backend has no such loop (AMX's tiles and the
// emulation).
//
// No bfloat16 product can run faster, so no step whose products take all
// its FLOPs can either: the benchmark divides it by the peer's GFLOP/s for
// the most a bf16 step could gain.
func BF16Peak(threads int) (gflops float64, ok bool) {
	pt := bf16Tiles()
	if pt == nil || pt.peak == nil || threads < 1 {
		return 0, false
	}
	return peakRate(threads, peakLoop{pt.peak, pt.peakFLOPs}), true
}

// BF16Backend names the kernel the bfloat16 products run on: AMX's tiles,
// VDPBF16PS's, or the FMA tile of the emulation (same bits on each).
func BF16Backend() string {
	if pt := bf16Tiles(); pt != nil {
		return pt.name
	}
	return emulKernel().name + " (emulated)"
}
