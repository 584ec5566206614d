//go:build mpi

package dist

/*
#cgo pkg-config: ompi
#include <mpi.h>

static int vit_init(int *provided) {
	int inited = 0;
	MPI_Initialized(&inited);
	if (inited) {
		return MPI_Query_thread(provided);
	}
	int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, provided);
	if (rc != MPI_SUCCESS) return rc;
	return MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}
static int vit_rank(int *r) { return MPI_Comm_rank(MPI_COMM_WORLD, r); }
static int vit_size(int *s) { return MPI_Comm_size(MPI_COMM_WORLD, s); }
static int vit_allreduce_f32(float *b, int n) { return MPI_Allreduce(MPI_IN_PLACE, b, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); }
static int vit_allreduce_f64(double *b, int n) { return MPI_Allreduce(MPI_IN_PLACE, b, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); }
static int vit_allreduce_i64(long long *b, int n) { return MPI_Allreduce(MPI_IN_PLACE, b, n, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD); }
static int vit_bcast(void *b, int n, int root) { return MPI_Bcast(b, n, MPI_BYTE, root, MPI_COMM_WORLD); }
static int vit_barrier(void) { return MPI_Barrier(MPI_COMM_WORLD); }
static int vit_abort(int code) { return MPI_Abort(MPI_COMM_WORLD, code); }
static int vit_finalize(void) {
	int fin = 0;
	MPI_Finalized(&fin);
	if (fin) return MPI_SUCCESS;
	return MPI_Finalize();
}
static void vit_error_string(int code, char *buf, int *n) { MPI_Error_string(code, buf, n); }
*/
import "C"

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Built reports whether this binary was built with -tags mpi.
const Built = true

// Error is a failed MPI call.
type Error struct {
	Call string // the MPI function
	Code int    // its error code
	Msg  string // MPI_Error_string of Code
}

func (e *Error) Error() string {
	return fmt.Sprintf("dist: %s: %s (MPI error %d)", e.Call, e.Msg, e.Code)
}

func check(call string, rc C.int) error {
	if rc == C.MPI_SUCCESS {
		return nil
	}
	var buf [C.MPI_MAX_ERROR_STRING]C.char
	var n C.int
	C.vit_error_string(rc, &buf[0], &n)
	return &Error{Call: call, Code: int(rc), Msg: C.GoStringN(&buf[0], n)}
}

var (
	worldOnce sync.Once
	world     *mpiComm
	worldErr  error
)

// Init starts MPI (once per process) and returns its world communicator. A
// process started without a launcher is a job of one rank.
func Init() (Comm, error) {
	worldOnce.Do(func() {
		var provided C.int
		if worldErr = check("MPI_Init_thread", C.vit_init(&provided)); worldErr != nil {
			return
		}
		if provided < C.MPI_THREAD_SERIALIZED {
			worldErr = fmt.Errorf("dist: MPI provides thread level %d, below MPI_THREAD_SERIALIZED", int(provided))
			return
		}
		var r, s C.int
		if worldErr = check("MPI_Comm_rank", C.vit_rank(&r)); worldErr != nil {
			return
		}
		if worldErr = check("MPI_Comm_size", C.vit_size(&s)); worldErr != nil {
			return
		}
		timeout, err := Timeout()
		if err != nil {
			worldErr = err
			return
		}
		world = &mpiComm{rank: int(r), size: int(s), timeout: timeout}
		if timeout > 0 && s > 1 {
			go world.watch()
		}
	})
	if worldErr != nil {
		return nil, worldErr
	}
	return world, nil
}

// Finalize shuts MPI down; call it once, after the last collective.
func Finalize() error {
	if world == nil {
		return nil
	}
	world.mu.Lock()
	defer world.mu.Unlock()
	return check("MPI_Finalize", C.vit_finalize())
}

// mpiComm is MPI_COMM_WORLD. Calls are serialised by mu
// (MPI_THREAD_SERIALIZED); the watchdog reads since.
type mpiComm struct {
	rank, size int
	timeout    time.Duration
	mu         sync.Mutex
	since      atomic.Int64 // UnixNano when the pending collective began; 0 = none
	pending    atomic.Value // its name
}

func (c *mpiComm) Rank() int { return c.rank }
func (c *mpiComm) Size() int { return c.size }

// maxCount is the largest element count of one MPI call (its count is a C int).
const maxCount = 1 << 30

// run carries out one collective under the watchdog's eye.
func (c *mpiComm) run(name string, f func() C.int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending.Store(name)
	c.since.Store(time.Now().UnixNano())
	defer c.since.Store(0)
	return check(name, f())
}

func (c *mpiComm) AllreduceFloat32(b []float32) error {
	for len(b) > 0 {
		n := min(len(b), maxCount)
		if err := c.run("MPI_Allreduce", func() C.int { return C.vit_allreduce_f32((*C.float)(&b[0]), C.int(n)) }); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

func (c *mpiComm) AllreduceFloat64(b []float64) error {
	for len(b) > 0 {
		n := min(len(b), maxCount)
		if err := c.run("MPI_Allreduce", func() C.int { return C.vit_allreduce_f64((*C.double)(&b[0]), C.int(n)) }); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

func (c *mpiComm) AllreduceInt64(b []int64) error {
	for len(b) > 0 {
		n := min(len(b), maxCount)
		if err := c.run("MPI_Allreduce", func() C.int { return C.vit_allreduce_i64((*C.longlong)(&b[0]), C.int(n)) }); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// bcast broadcasts n bytes at p from root, in pieces of maxCount bytes.
func (c *mpiComm) bcast(p unsafe.Pointer, n, root int) error {
	if err := checkRoot(root, c.size); err != nil {
		return err
	}
	for off := 0; off < n; off += maxCount {
		k := min(n-off, maxCount)
		if err := c.run("MPI_Bcast", func() C.int { return C.vit_bcast(unsafe.Add(p, off), C.int(k), C.int(root)) }); err != nil {
			return err
		}
	}
	return nil
}

func (c *mpiComm) BcastFloat32(b []float32, root int) error {
	if len(b) == 0 {
		return checkRoot(root, c.size)
	}
	return c.bcast(unsafe.Pointer(&b[0]), 4*len(b), root)
}

func (c *mpiComm) BcastInt64(b []int64, root int) error {
	if len(b) == 0 {
		return checkRoot(root, c.size)
	}
	return c.bcast(unsafe.Pointer(&b[0]), 8*len(b), root)
}

func (c *mpiComm) BcastBytes(b []byte, root int) error {
	if len(b) == 0 {
		return checkRoot(root, c.size)
	}
	return c.bcast(unsafe.Pointer(&b[0]), len(b), root)
}

func (c *mpiComm) Barrier() error {
	return c.run("MPI_Barrier", func() C.int { return C.vit_barrier() })
}

// Abort asks MPI to end every rank of the job with status code, and ends this
// process with it should MPI return.
func (c *mpiComm) Abort(code int) {
	go func() { // MPI_Abort may itself wait on a dead peer
		time.Sleep(10 * time.Second)
		os.Exit(code)
	}()
	C.vit_abort(C.int(code))
	os.Exit(code)
}

// WatchdogStatus is the exit status of a rank whose collective outlived
// VIT_DIST_TIMEOUT.
const WatchdogStatus = 3

// watch ends the job when one collective has waited longer than the timeout.
func (c *mpiComm) watch() {
	tick := time.NewTicker(min(c.timeout/4, time.Second))
	defer tick.Stop()
	for range tick.C {
		s := c.since.Load()
		if s == 0 || time.Since(time.Unix(0, s)) < c.timeout {
			continue
		}
		fmt.Fprintf(os.Stderr, "dist: rank %d of %d: %v has waited %v for the other ranks (VIT_DIST_TIMEOUT=%v); ending the job\n",
			c.rank, c.size, c.pending.Load(), time.Since(time.Unix(0, s)).Round(time.Second), c.timeout)
		c.Abort(WatchdogStatus)
	}
}
