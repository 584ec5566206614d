//go:build !amd64 || purego

package kernels

import "runtime"

// bf16Missing lists what this build lacks to run the bfloat16 kernel named
// by BF16KernelEnv's value: both are amd64 assembly.
func bf16Missing(kernel string) []string {
	return []string{"amd64 assembly (this build is " + runtime.GOARCH + " or -tags purego)"}
}
