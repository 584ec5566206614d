//go:build !amd64 || purego

package kernels

// Without amd64 assembly (another GOARCH, or the purego build tag) every
// kernel runs its portable Go version.
var (
	hasAVX2   = false
	hasAVX512 = false
)
