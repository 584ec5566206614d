// Package cliflag holds the command-line flag types the commands and
// experiments share.
package cliflag

import "strings"

// Strings is a repeatable string flag: each occurrence appends its value, in
// order (-set a=1 -set b=2 gives [a=1 b=2]). It implements flag.Value.
type Strings []string

// String joins the values with commas.
func (s *Strings) String() string {
	if s == nil {
		return ""
	}
	return strings.Join(*s, ",")
}

// Set appends v.
func (s *Strings) Set(v string) error { *s = append(*s, v); return nil }
