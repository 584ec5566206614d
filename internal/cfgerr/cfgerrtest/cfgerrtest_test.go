package cfgerrtest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/vitgo/vit/internal/cfgerr"
)

func TestCheck(t *testing.T) {
	keyed := fmt.Errorf("parse: %w", &cfgerr.Error{Key: "net.depth", Line: 2, Err: errors.New("bad")})
	doc := errors.New("second document")
	for _, tc := range []struct {
		name string
		err  error
		key  string
		line int
		ok   bool
	}{
		{"none wanted, none", nil, "", 0, true},
		{"none wanted, one", doc, "", 0, false},
		{"document-level", doc, "", -1, true},
		{"document-level, got keyed", keyed, "", -1, false},
		{"document-level, got none", nil, "", -1, false},
		{"keyed", keyed, "net.depth", 2, true},
		{"keyed, other key", keyed, "net.width", 2, false},
		{"keyed, other line", keyed, "net.depth", 3, false},
		{"keyed, got document-level", doc, "net.depth", 2, false},
		{"keyed, got none", nil, "net.depth", 2, false},
	} {
		if got := Check(tc.err, tc.key, tc.line); (got == nil) != tc.ok {
			t.Errorf("%s: Check = %v, want ok %v", tc.name, got, tc.ok)
		}
	}
}
