//go:build !amd64 || purego

package kernels

// bestKernel returns the portable Go micro-kernel: no assembly is built here.
func bestKernel() *gemmKernel { return kernelGo }

// narrowKernel: one kernel serves every width here.
func narrowKernel() *gemmKernel { return nil }

// allKernels lists every micro-kernel this build can run, for tests.
func allKernels() []*gemmKernel { return []*gemmKernel{kernelGo} }

// emulKernel returns the portable FTZ micro-kernel of the emulated
// bfloat16 products.
func emulKernel() *gemmKernel { return kernelGoFTZ }

// allEmulKernels lists every FTZ micro-kernel this build can run, for tests.
func allEmulKernels() []*gemmKernel { return []*gemmKernel{kernelGoFTZ} }
