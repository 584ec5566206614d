// Package cfgerrtest checks, for tests, the errors a config parser returns.
package cfgerrtest

import (
	"errors"
	"fmt"
	"strings"

	"github.com/vitgo/vit/internal/cfgerr"
)

// Check returns nil when err is what a test of a config parser expects,
// else an error saying how it differs. The test expects no error when key
// is "" and line 0; an error of the document as a whole, not a
// *cfgerr.Error, when key is "" and line < 0; otherwise a *cfgerr.Error
// for key at line (0 for an override), whose message names the key.
func Check(err error, key string, line int) error {
	var ce *cfgerr.Error
	switch {
	case key == "" && line == 0:
		if err != nil {
			return fmt.Errorf("error %v: want none", err)
		}
	case err == nil:
		return errors.New("accepted, want an error")
	case key == "":
		if errors.As(err, &ce) {
			return fmt.Errorf("error %v: want a document-level error, got a *cfgerr.Error for %s", err, ce.Key)
		}
	case !errors.As(err, &ce) || ce.Key != key || ce.Line != line:
		return fmt.Errorf("error %v: want a *cfgerr.Error for %s at line %d", err, key, line)
	case !strings.Contains(err.Error(), key):
		return fmt.Errorf("error %q does not name %s", err, key)
	}
	return nil
}
