package kernels

import "testing"

// TestSizedPool: a buffer of class c has exactly 2^c elements, the
// smallest power of two that holds the request, and comes back with the
// requested length.
func TestSizedPool(t *testing.T) {
	var p sizedPool[uint32]
	for _, tc := range []struct{ n, class int }{
		{0, 0}, {1, 0}, {2, 1}, {3, 2}, {4, 2}, {5, 3}, {1000, 10}, {1024, 10}, {1025, 11}, {1 << 20, 20}, {1<<20 + 1, 21},
	} {
		if c := sizeClass(tc.n); c != tc.class {
			t.Errorf("sizeClass(%d) = %d, want %d", tc.n, c, tc.class)
		}
		buf := p.get(tc.n)
		if len(*buf) != tc.n || cap(*buf) != 1<<tc.class {
			t.Errorf("get(%d): len %d cap %d, want len %d cap %d", tc.n, len(*buf), cap(*buf), tc.n, 1<<tc.class)
		}
		p.put(buf)
		// Whatever the pool keeps, a request of the class's full size fits.
		if again := p.get(1 << tc.class); len(*again) != 1<<tc.class {
			t.Errorf("get(%d) after put: len %d", 1<<tc.class, len(*again))
		}
	}
}
