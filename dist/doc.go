// Package dist is the communicator of data-parallel training: the few
// collective operations the trainer needs, behind one small interface.
//
// Three implementations share the interface:
//
//   - Single, one process: every collective is a no-op. It is what Init
//     returns in the default (pure Go) build.
//   - Init in a build with -tags mpi: the world communicator of MPI (Open MPI
//     or MPICH, through a thin cgo binding), for processes started by
//     mpirun/mpiexec, srun --mpi=pmix or Kubeflow's MPIJob.
//   - NewLocal, n ranks inside one process (goroutines), for tests.
//
// Every rank must call the same collectives in the same order with buffers
// of the same length; sums are element-wise and in place.
//
// Fault handling. A collective never waits forever in the MPI build: a
// watchdog ends the process (status 3, after asking MPI to abort the job) when
// one collective has waited longer than VIT_DIST_TIMEOUT (a Go duration,
// default 5m; 0 turns it off), which catches a rank that hangs outside MPI.
// A rank that dies (kill -9) is noticed by the launcher itself: mpirun ends the
// whole job with a non-zero status when one process exits abnormally.
package dist
