//go:build !mpi

package dist

import (
	"errors"
	"testing"
)

func TestInitWithoutMPI(t *testing.T) {
	t.Setenv("OMPI_COMM_WORLD_SIZE", "")
	t.Setenv("PMI_SIZE", "")
	c, err := Init()
	if err != nil || c.Size() != 1 || c.Rank() != 0 {
		t.Fatalf("Init: %v, %v; want Single", c, err)
	}
	t.Setenv("OMPI_COMM_WORLD_SIZE", "2")
	var le *LaunchError
	if _, err := Init(); !errors.As(err, &le) || le.Size != 2 {
		t.Fatalf("Init under mpirun -np 2 without -tags mpi: %v, want *LaunchError", err)
	}
}
