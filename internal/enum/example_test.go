package enum_test

import (
	"fmt"

	"github.com/vitgo/vit/internal/enum"
)

// Readout is a typed string option; "" means its default.
type Readout string

const (
	ReadoutCLS  Readout = "cls"
	ReadoutMean Readout = "mean"
)

// Validate reports whether r is a readout ("" = cls).
func (r Readout) Validate() error { return enum.Check(r, ReadoutCLS, ReadoutMean) }

func ExampleCheck() {
	fmt.Println(Readout("").Validate(), Readout("mean").Validate())
	fmt.Println(Readout("max").Validate())
	// Output:
	// <nil> <nil>
	// must be "cls" or "mean", got "max"
}
