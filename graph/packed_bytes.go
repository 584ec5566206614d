package graph

// Bytes is the memory the packed weight holds: float32 or bfloat16 panels,
// or int8 integers with their per-channel scales and column sums, or a
// float64 transposed copy.
func (p *PackedWeight) Bytes() int64 {
	var n int64
	if p.f32 != nil {
		n += p.f32.Bytes()
	}
	if p.i8 != nil {
		n += p.i8.Bytes()
	}
	return n + 8*int64(len(p.f64))
}
