package dist

import (
	"fmt"
	"os"
	"time"
)

// DefaultTimeout is how long one collective may wait for the other ranks
// before the MPI build's watchdog ends the job.
const DefaultTimeout = 5 * time.Minute

// TimeoutVar is the environment variable that overrides DefaultTimeout.
const TimeoutVar = "VIT_DIST_TIMEOUT"

// Timeout returns the collective timeout: $VIT_DIST_TIMEOUT parsed as a Go
// duration ("90s", "10m"; "0" turns the watchdog off), or DefaultTimeout.
func Timeout() (time.Duration, error) {
	s, ok := os.LookupEnv(TimeoutVar)
	if !ok || s == "" {
		return DefaultTimeout, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("dist: %s=%q: want a duration ≥ 0 such as 90s or 10m", TimeoutVar, s)
	}
	return d, nil
}
