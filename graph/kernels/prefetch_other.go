//go:build !amd64 || purego

package kernels

// prefetch is a no-op without assembly.
func prefetch(s []float32) {}
