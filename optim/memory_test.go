package optim

import "testing"

// TestSlotsPerParam: AdamW keeps two values per trained parameter (m and
// v), under its name and the default ""; an unknown name is not known.
func TestSlotsPerParam(t *testing.T) {
	for _, tc := range []struct {
		name  string
		slots int
		ok    bool
	}{
		{"adamw", 2, true}, {"", 2, true}, {"lamb", 2, true},
		{"sgd", 1, true}, {"nesterov", 1, true}, {"momentum", 1, true}, {"adam_w", 0, false},
	} {
		if n, ok := SlotsPerParam(tc.name); n != tc.slots || ok != tc.ok {
			t.Errorf("SlotsPerParam(%q) = %d, %v; want %d, %v", tc.name, n, ok, tc.slots, tc.ok)
		}
	}
}
