//go:build !amd64 || purego

package harness

// vectorISA: without amd64 assembly every kernel is its portable Go version.
func vectorISA() string { return isaGo }
