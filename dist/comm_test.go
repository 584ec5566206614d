package dist

import (
	"errors"
	"sync"
	"testing"
)

// onRanks runs f on every rank of a NewLocal(n) job at once and returns
// each rank's error.
func onRanks(t *testing.T, n int, f func(c Comm) error) []error {
	t.Helper()
	cs, err := NewLocal(n)
	if err != nil {
		t.Fatal(err)
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[r] = f(c)
		}()
	}
	wg.Wait()
	return errs
}

func TestSingle(t *testing.T) {
	c := Single()
	if c.Rank() != 0 || c.Size() != 1 {
		t.Fatalf("Single: rank %d of %d", c.Rank(), c.Size())
	}
	b := []float32{1, 2}
	if err := c.AllreduceFloat32(b); err != nil || b[0] != 1 || b[1] != 2 {
		t.Fatalf("AllreduceFloat32 changed %v (%v)", b, err)
	}
	var re *RootError
	if err := c.BcastInt64([]int64{1}, 1); !errors.As(err, &re) {
		t.Fatalf("Bcast from root 1 of 1: %v, want *RootError", err)
	}
	if v, err := AllreduceMax(c, 7); v != 7 || err != nil {
		t.Fatalf("AllreduceMax = %d, %v", v, err)
	}
}

func TestLocalCollectives(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5} {
		errs := onRanks(t, n, func(c Comm) error {
			r := c.Rank()
			for rep := 0; rep < 20; rep++ { // reuse the hub many times
				f32 := []float32{float32(r), 1}
				f64 := []float64{float64(r) * 0.5}
				i64 := []int64{int64(r), -1}
				if err := c.AllreduceFloat32(f32); err != nil {
					return err
				}
				if err := c.AllreduceFloat64(f64); err != nil {
					return err
				}
				if err := c.AllreduceInt64(i64); err != nil {
					return err
				}
				tri := n * (n - 1) / 2
				if f32[0] != float32(tri) || f32[1] != float32(n) || f64[0] != float64(tri)*0.5 || i64[0] != int64(tri) || i64[1] != -int64(n) {
					t.Errorf("n=%d rank %d: sums %v %v %v", n, r, f32, f64, i64)
				}
				root := rep % n
				b := []byte{byte(r), byte(r)}
				w := []float32{float32(r)}
				k := []int64{int64(r)}
				if err := c.BcastBytes(b, root); err != nil {
					return err
				}
				if err := c.BcastFloat32(w, root); err != nil {
					return err
				}
				if err := c.BcastInt64(k, root); err != nil {
					return err
				}
				if b[1] != byte(root) || w[0] != float32(root) || k[0] != int64(root) {
					t.Errorf("n=%d rank %d: bcast from %d gave %v %v %v", n, r, root, b, w, k)
				}
				m, err := AllreduceMax(c, int64(r*rep))
				if err != nil {
					return err
				}
				if m != int64((n-1)*rep) {
					t.Errorf("AllreduceMax = %d, want %d", m, (n-1)*rep)
				}
				if err := c.Barrier(); err != nil {
					return err
				}
			}
			return nil
		})
		for r, err := range errs {
			if err != nil {
				t.Errorf("n=%d rank %d: %v", n, r, err)
			}
		}
	}
}

func TestLocalMismatch(t *testing.T) {
	errs := onRanks(t, 2, func(c Comm) error {
		return c.AllreduceFloat32(make([]float32, 1+c.Rank()))
	})
	for r, err := range errs {
		if !errors.Is(err, ErrMismatch) {
			t.Errorf("rank %d: lengths 1 and 2 gave %v, want ErrMismatch", r, err)
		}
	}
	errs = onRanks(t, 2, func(c Comm) error {
		if c.Rank() == 0 {
			return c.Barrier()
		}
		return c.BcastBytes(nil, 0)
	})
	for r, err := range errs {
		if !errors.Is(err, ErrMismatch) {
			t.Errorf("rank %d: Barrier against Bcast gave %v, want ErrMismatch", r, err)
		}
	}
}

func TestLocalAbort(t *testing.T) {
	errs := onRanks(t, 3, func(c Comm) error {
		if c.Rank() == 2 {
			c.Abort(4)
			return nil
		}
		return c.Barrier() // would wait forever for rank 2 without the abort
	})
	for r := 0; r < 2; r++ {
		var ae *AbortError
		if !errors.As(errs[r], &ae) || ae.Rank != 2 || ae.Code != 4 {
			t.Errorf("rank %d: %v, want *AbortError from rank 2 with code 4", r, errs[r])
		}
	}
}

func TestNewLocalRejectsZero(t *testing.T) {
	if _, err := NewLocal(0); err == nil {
		t.Fatal("NewLocal(0) succeeded")
	}
}
