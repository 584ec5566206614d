//go:build !mpi

package dist

import (
	"fmt"
	"os"
	"strconv"
)

// Built reports whether this binary was built with -tags mpi.
const Built = false

// LaunchError is returned by Init when the process was started as one of
// several ranks (by mpirun, mpiexec or srun) but cannot join them: the binary
// was built without -tags mpi, so every rank would train alone and write the
// same files.
type LaunchError struct {
	Var  string // the launcher's environment variable that gave it away
	Size int    // the number of ranks it names
}

func (e *LaunchError) Error() string {
	return fmt.Sprintf("dist: started as one of %d ranks (%s) by an MPI launcher, but built without MPI: rebuild with `go build -tags mpi`", e.Size, e.Var)
}

// Init returns the job's communicator. This build has no MPI: it returns
// Single, or a *LaunchError when an MPI launcher started several copies.
func Init() (Comm, error) {
	for _, v := range launcherVars {
		if n, err := strconv.Atoi(os.Getenv(v)); err == nil && n > 1 {
			return nil, &LaunchError{Var: v, Size: n}
		}
	}
	return Single(), nil
}

// Finalize ends the use of the communicator Init returned (a no-op here).
func Finalize() error { return nil }

// launcherVars are the job-size variables that Open MPI's mpirun and
// MPICH's Hydra set in every rank.
var launcherVars = []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}
