package kernels

import "testing"

func BenchmarkZZRows(b *testing.B) {
	for _, k := range []int{64, 256} {
		m := 6400
		a := make([]float32, m*k)
		w := make([]uint16, m*k)
		for i := range a {
			a[i] = float32(i%97) * 0.01
			w[i] = uint16(i)
		}
		kw := (k + 31) / 32 * 32
		dst := make([]uint16, 32*kw)
		b.Run("f32-stream-k"+itoa(k), func(b *testing.B) {
			for it := 0; it < b.N; it++ {
				for i0 := 0; i0 < m; i0 += 32 {
					rowsBF16(dst, kw, a[i0*k:], k, 32, k, true)
				}
			}
			b.SetBytes(int64(m * k * 4))
		})
		b.Run("f32-hot-k"+itoa(k), func(b *testing.B) {
			for it := 0; it < b.N; it++ {
				for i0 := 0; i0 < m; i0 += 32 {
					rowsBF16(dst, kw, a[:], k, 32, k, true)
				}
			}
			b.SetBytes(int64(m * k * 4))
		})
		b.Run("w-stream-k"+itoa(k), func(b *testing.B) {
			for it := 0; it < b.N; it++ {
				for i0 := 0; i0 < m; i0 += 32 {
					rowsWords(dst, kw, w[i0*k:], k, 32, k, true)
				}
			}
			b.SetBytes(int64(m * k * 2))
		})
		b.Run("w-hot-k"+itoa(k), func(b *testing.B) {
			for it := 0; it < b.N; it++ {
				for i0 := 0; i0 < m; i0 += 32 {
					rowsWords(dst, kw, w[:], k, 32, k, true)
				}
			}
			b.SetBytes(int64(m * k * 2))
		})
	}
}

func itoa(i int) string {
	s := ""
	for i > 0 {
		s = string(rune('0'+i%10)) + s
		i /= 10
	}
	return s
}
