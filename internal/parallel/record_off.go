//go:build !parallelrecord

package parallel

import "time"

// Recording says whether this build has the recording hooks (the build tag
// parallelrecord). This one does not: Record returns ErrNotRecording, and
// Waited and Polled are 0.
const Recording = false

// Record returns ErrNotRecording: this build has no recording hooks (see
// the build tag parallelrecord).
func Record(f func(Pass)) (stop func(), err error) { return func() {}, ErrNotRecording }

// Waited is 0 in this build (see the build tag parallelrecord).
func Waited() time.Duration { return 0 }

// Polled is 0 in this build (see the build tag parallelrecord).
func Polled() time.Duration { return 0 }

// The hooks Run calls under `if Recording`, compiled out here.
func recordRun(int, func(int)) bool { return false }
func addWaited(time.Duration)       {}
func addPolled(time.Duration)       {}
