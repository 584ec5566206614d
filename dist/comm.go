package dist

import (
	"errors"
	"fmt"
)

// Comm is a communicator: the ranks of one job and the collectives among them.
// Rank 0 is the root that reads, writes and logs.
type Comm interface {
	Rank() int // this process's rank, 0 ≤ Rank < Size
	Size() int // number of ranks

	// AllreduceFloat32 replaces buf on every rank with the element-wise sum
	// of every rank's buf; likewise AllreduceFloat64 and AllreduceInt64.
	AllreduceFloat32(buf []float32) error
	AllreduceFloat64(buf []float64) error
	AllreduceInt64(buf []int64) error

	// BcastFloat32 copies root's buf into every other rank's buf; likewise
	// BcastInt64 and BcastBytes.
	BcastFloat32(buf []float32, root int) error
	BcastInt64(buf []int64, root int) error
	BcastBytes(buf []byte, root int) error

	// Barrier returns when every rank has called it.
	Barrier() error

	// Abort ends the whole job with status code, from any one rank.
	Abort(code int)
}

// AbortError is returned by the collectives of the other ranks of a job that
// one rank aborted (NewLocal's ranks; MPI ends the processes instead).
type AbortError struct {
	Rank int // the rank that called Abort
	Code int // its status code
}

func (e *AbortError) Error() string {
	return fmt.Sprintf("dist: rank %d aborted the job with status %d", e.Rank, e.Code)
}

// ErrMismatch is returned when ranks call different collectives, or one
// collective with buffers of different lengths or different roots.
var ErrMismatch = errors.New("dist: ranks disagree on the collective call")

// RootError is returned for a root outside [0, Size).
type RootError struct{ Root, Size int }

func (e *RootError) Error() string {
	return fmt.Sprintf("dist: root %d is not a rank of a job of %d", e.Root, e.Size)
}

func checkRoot(root, size int) error {
	if root < 0 || root >= size {
		return &RootError{root, size}
	}
	return nil
}

// Single returns the communicator of a job of one process: rank 0 of 1, every
// collective a no-op. Abort panics with an *AbortError, so a caller's deferred
// cleanup runs; a one-process program should return errors instead.
func Single() Comm { return single{} }

type single struct{}

func (single) Rank() int                             { return 0 }
func (single) Size() int                             { return 1 }
func (single) AllreduceFloat32([]float32) error      { return nil }
func (single) AllreduceFloat64([]float64) error      { return nil }
func (single) AllreduceInt64([]int64) error          { return nil }
func (single) BcastFloat32(_ []float32, r int) error { return checkRoot(r, 1) }
func (single) BcastInt64(_ []int64, r int) error     { return checkRoot(r, 1) }
func (single) BcastBytes(_ []byte, r int) error      { return checkRoot(r, 1) }
func (single) Barrier() error                        { return nil }
func (single) Abort(code int)                        { panic(&AbortError{Rank: 0, Code: code}) }

// AllreduceMax replaces v on every rank with the largest v of any rank; the
// trainer shares its stop flag with it.
func AllreduceMax(c Comm, v int64) (int64, error) {
	if c.Size() == 1 {
		return v, nil
	}
	buf := make([]int64, c.Size())
	buf[c.Rank()] = v
	if err := c.AllreduceInt64(buf); err != nil {
		return 0, err
	}
	m := buf[0]
	for _, x := range buf[1:] {
		m = max(m, x)
	}
	return m, nil
}
