// Package enum validates the typed string options of the config sections
// (layers.Readout, data.MixMode, train.Interp, optim.Sched, …): a value is
// valid when it is "" (the option's documented default) or one of its
// constants. Each option keeps its own Validate method, written as one call
// of Check.
package enum

import (
	"fmt"
	"strings"
)

// Error is a value outside its option's set, as Check reports it. Config
// validation wraps it under the key's name (cfgerr), so errors.As finds it.
type Error struct {
	Got  string   // the value given
	Want []string // the accepted values, in the order the option lists them
}

func (e *Error) Error() string {
	q := make([]string, len(e.Want))
	for i, w := range e.Want {
		q[i] = fmt.Sprintf("%q", w)
	}
	var want string
	switch len(q) {
	case 1:
		want = q[0]
	case 2:
		want = q[0] + " or " + q[1]
	default:
		want = "one of " + strings.Join(q, ", ")
	}
	return fmt.Sprintf("must be %s, got %q", want, e.Got)
}

// Check returns nil when v is "" or one of values, and otherwise an *Error
// listing values.
func Check[T ~string](v T, values ...T) error {
	if v == "" {
		return nil
	}
	for _, w := range values {
		if v == w {
			return nil
		}
	}
	want := make([]string, len(values))
	for i, w := range values {
		want[i] = string(w)
	}
	return &Error{Got: string(v), Want: want}
}
