package optim

import "testing"

// benchParams returns n values split over a ViT-like mix of 2-D and 1-D tensors.
func benchParams(n int) []Param {
	var ps []Param
	for i := 0; n > 0; i++ {
		rows := min(n/256, 256)
		shape := []int{rows, 256}
		if rows == 0 {
			shape = []int{n}
		}
		size := 1
		for _, d := range shape {
			size *= d
		}
		p := Param{Name: "blocks." + string(rune('a'+i%26)) + string(rune('a'+i/26)) + ".weight", Shape: shape,
			Value: make([]float32, size), Grad: make([]float32, size)}
		for j := range p.Grad {
			p.Value[j], p.Grad[j] = float32(j%7)*0.1, float32(j%5-2)*0.01
		}
		ps = append(ps, p)
		n -= size
	}
	return ps
}

func BenchmarkAdamWStep(b *testing.B) {
	ps := benchParams(1 << 20)
	o, err := NewAdamW(DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(4 << 20)
	b.ReportAllocs()
	for b.Loop() {
		if err := o.Step(ps, 1e-3); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkClipGradNorm(b *testing.B) {
	ps := benchParams(1 << 20)
	b.SetBytes(4 << 20)
	for b.Loop() {
		ClipGradNorm(ps, 1e9)
	}
}

func BenchmarkEMAUpdate(b *testing.B) {
	ps := benchParams(1 << 20)
	e, err := NewEMA(0.9998, false, ps)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(4 << 20)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := e.Update(ps, i+2); err != nil {
			b.Fatal(err)
		}
	}
}
