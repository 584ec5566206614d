package train

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/dist"
)

func TestGradAccumStepsBounds(t *testing.T) {
	for _, tc := range []struct {
		k, batch int
		ok       bool
	}{{0, 128, true}, {1, 128, true}, {4, 128, true}, {128, 128, true}, {-1, 128, false}, {3, 128, false}, {256, 128, false}} {
		c := DefaultConfig()
		c.Train.BatchSize, c.Train.GradAccumSteps = tc.batch, tc.k
		err := c.Validate()
		if (err == nil) != tc.ok || err != nil && !strings.Contains(err.Error(), "train.grad_accum_steps") {
			t.Errorf("grad_accum_steps %d, batch %d: %v", tc.k, tc.batch, err)
		}
	}
}

func TestMicroRows(t *testing.T) {
	one := dist.Single()
	rows, err := microRows(8, 1, one)
	if err != nil || len(rows) != 1 || rows[0] != nil {
		t.Fatalf("one rank, one micro-batch: %v, %v; want the batch itself (nil rows)", rows, err)
	}
	if rows, err = microRows(8, 2, one); err != nil || fmt.Sprint(rows) != "[[0 1 2 3] [4 5 6 7]]" {
		t.Fatalf("k=2: %v, %v", rows, err)
	}
	cs, _ := dist.NewLocal(2)
	if rows, err = microRows(8, 2, cs[1]); err != nil || fmt.Sprint(rows) != "[[2 3] [4 5]]" {
		t.Fatalf("rank 1 of 2, k=2: %v, %v", rows, err)
	}
	var ge *GradAccumError
	if _, err = microRows(8, 3, cs[0]); !errors.As(err, &ge) {
		t.Fatalf("k=3 of 4 rows: %v, want *GradAccumError", err)
	}
	var se *data.ShardError
	if _, err = microRows(6, 1, cs[0]); !errors.As(err, &se) {
		t.Fatalf("batch 6 on 2 ranks: %v, want *data.ShardError", err)
	}
}
