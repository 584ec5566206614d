package dist

import "testing"

func TestTimeout(t *testing.T) {
	for _, tc := range []struct {
		v    string
		ok   bool
		want string
	}{{"", true, DefaultTimeout.String()}, {"90s", true, "1m30s"}, {"0", true, "0s"}, {"-1s", false, ""}, {"soon", false, ""}} {
		t.Setenv(TimeoutVar, tc.v)
		d, err := Timeout()
		if (err == nil) != tc.ok || (tc.ok && d.String() != tc.want) {
			t.Errorf("%s=%q: %v, %v", TimeoutVar, tc.v, d, err)
		}
	}
}
