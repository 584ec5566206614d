package kernels

// Bytes is the memory the packed matrix holds: its float32 panels (or the
// OpenBLAS build's row-major copy) and its bfloat16 words.
func (p *PackedB) Bytes() int64 {
	return 4 * int64(len(p.panels)+len(p.rows)+len(p.words))
}
