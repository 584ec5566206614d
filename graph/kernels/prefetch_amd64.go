//go:build amd64 && !purego

package kernels

//go:noescape
func prefetchL2(p *float32, n int)

// prefetch asks for s to be brought into L2 (a hint; no effect on results).
func prefetch(s []float32) {
	if len(s) > 0 {
		prefetchL2(&s[0], len(s))
	}
}
