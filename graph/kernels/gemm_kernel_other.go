//go:build !amd64 || purego

package kernels

// bestKernel returns the portable Go micro-kernel: no assembly is built here.
func bestKernel() *gemmKernel { return kernelGo }

// allKernels lists every micro-kernel this build can run, for tests.
func allKernels() []*gemmKernel { return []*gemmKernel{kernelGo} }
