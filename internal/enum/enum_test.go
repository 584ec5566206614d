package enum_test

import (
	"errors"
	"testing"

	"github.com/vitgo/vit/internal/enum"
)

type mode string

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		v      mode
		values []mode
		want   string // "" = valid
	}{
		{"", []mode{"a", "b"}, ""},
		{"b", []mode{"a", "b"}, ""},
		{"x", []mode{"a"}, `must be "a", got "x"`},
		{"x", []mode{"a", "b"}, `must be "a" or "b", got "x"`},
		{"x", []mode{"a", "b", "c"}, `must be one of "a", "b", "c", got "x"`},
		{"A", []mode{"a"}, `must be "a", got "A"`}, // case matters
	} {
		err := enum.Check(tc.v, tc.values...)
		if tc.want == "" {
			if err != nil {
				t.Errorf("Check(%q, %q): %v", tc.v, tc.values, err)
			}
			continue
		}
		var e *enum.Error
		if !errors.As(err, &e) || e.Got != string(tc.v) || len(e.Want) != len(tc.values) {
			t.Errorf("Check(%q, %q) = %v, want an *enum.Error", tc.v, tc.values, err)
			continue
		}
		if err.Error() != tc.want {
			t.Errorf("Check(%q, %q) says %q, want %q", tc.v, tc.values, err, tc.want)
		}
	}
}
