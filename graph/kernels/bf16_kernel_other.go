//go:build !amd64 || purego

package kernels

// hasAVX512BF16 is false: no assembly is built here.
const hasAVX512BF16 = false

// bf16HWKernel returns nil: the bfloat16 products are emulated here.
func bf16HWKernel() *bf16Kernel { return nil }
