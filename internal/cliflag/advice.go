package cliflag

import (
	"errors"

	"github.com/vitgo/vit/internal/strictyaml"
)

// SetAdvice names the -set flag behind a config error in an override
// (a *strictyaml.OverrideError), as the commands print it: "-set KEY=VALUE"
// and what to do; "" when err holds none.
func SetAdvice(err error) string {
	var oe *strictyaml.OverrideError
	if !errors.As(err, &oe) {
		return ""
	}
	if errors.Is(err, strictyaml.ErrOverrideSyntax) {
		return "-set " + oe.Override + ": want -set key=value"
	}
	return "-set " + oe.Override + ": fix the value, or drop the -set to keep the file's"
}
