//go:build !linux

package meminfo

// rlimits reads no limits where /proc/self/status is not there to say how
// much of them is used.
func rlimits() []Limit { return nil }
