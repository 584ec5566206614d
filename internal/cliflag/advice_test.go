package cliflag

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vitgo/vit/internal/cfgerr"
	"github.com/vitgo/vit/internal/strictyaml"
)

// TestSetAdvice: an override's error, however wrapped, is advice about its
// -set flag; any other error is none.
func TestSetAdvice(t *testing.T) {
	bad := &strictyaml.OverrideError{Override: "model.depth=", Err: cfgerr.New("model.depth", "empty value")}
	if got := SetAdvice(fmt.Errorf("config x.yaml: %w", bad)); !strings.HasPrefix(got, "-set model.depth=:") {
		t.Errorf("advice %q, want it to start with -set model.depth=:", got)
	}
	syntax := &strictyaml.OverrideError{Override: "model.depth", Err: strictyaml.ErrOverrideSyntax}
	if got := SetAdvice(syntax); !strings.Contains(got, "want -set key=value") {
		t.Errorf("advice %q, want -set key=value", got)
	}
	if got := SetAdvice(cfgerr.New("model.depth", "too deep")); got != "" {
		t.Errorf("advice %q for an error of the file", got)
	}
}
