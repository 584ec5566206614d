package kernels

import (
	"os"
	"sync"
)

// The bfloat16 products run on AMX where the CPU and Linux allow it, and
// on the emulation (the FTZ float32 tiles, bf16_tile_emul.go) elsewhere;
// both give sgemmBF16Ref's bits. The environment variable
// VIT_BF16_KERNEL=emulated forces the emulation, and =amx asks for AMX
// (the emulation still runs where AMX is missing), for the tests and
// benchmarks that compare them.

var bf16Pick struct {
	once sync.Once
	amx  bool
}

// bf16AMX reports whether the bfloat16 products run on AMX tiles: the CPU
// has AMX-TILE and AMX-BF16 (GODEBUG=cpu.amxbf16=off clears it) and
// AVX-512 (the packing's; GODEBUG=cpu.avx512f=off clears it), Linux granted
// the tile state, and VIT_BF16_KERNEL is not "emulated".
func bf16AMX() bool {
	bf16Pick.once.Do(func() {
		bf16Pick.amx = os.Getenv("VIT_BF16_KERNEL") != "emulated" && hasAMX()
	})
	return bf16Pick.amx && hasAVX512
}

// BF16Backend names the kernel the bfloat16 products run on: the AMX tiles,
// or the FMA tile of the emulation (same bits either way).
func BF16Backend() string {
	if bf16AMX() {
		return "amx 32x32 (tdpbf16ps)"
	}
	return emulKernel().name + " (emulated)"
}
