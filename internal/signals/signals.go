// Package signals gives the commands one way to handle SIGINT and SIGTERM:
// the first signal cancels a context so the work in progress stops cleanly
// (a checkpoint, no partial report); a second one exits at once.
package signals

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/vitgo/vit/internal/atomicfile"
)

// exit is os.Exit, replaced in tests.
var exit = os.Exit

// Context returns a context that the first SIGINT or SIGTERM cancels, and
// then writes first (if not empty) to w: once the line is out, the context
// is done (tests that signal a child process wait for the line). A second
// signal removes the temporary files of writes in progress and exits the
// process at once with status 128+signal (130 for SIGINT), without running
// deferred calls. stop releases the signals.
func Context(parent context.Context, w io.Writer, first string) (ctx context.Context, stop func()) {
	ctx, cancelCause := context.WithCancelCause(parent)
	cancel := func() { cancelCause(nil) }
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		n := 0
		for {
			select {
			case <-done:
				return
			case s := <-ch:
				n++
				if n == 1 {
					cancelCause(&Received{Signal: s}) // before the message: a reader of w may act on it
					if first != "" {
						fmt.Fprintf(w, "%s: %s (again to exit at once)\n", s, first)
					}
					continue
				}
				atomicfile.Cleanup()
				code := (&Received{Signal: s}).ExitStatus()
				fmt.Fprintf(w, "%s again: exiting at once with status %d\n", s, code)
				exit(code)
			}
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel()
	}
}

// Received is the cause (context.Cause) of a context that Context cancelled
// on a signal.
type Received struct {
	Signal os.Signal
}

func (r *Received) Error() string { return "received " + r.Signal.String() }

// ExitStatus is the shell's status for a process ended by the signal:
// 128 + its number (130 for SIGINT, 143 for SIGTERM).
func (r *Received) ExitStatus() int {
	if sig, ok := r.Signal.(syscall.Signal); ok {
		return 128 + int(sig)
	}
	return 130
}

// ExitStatus is the status a command exits with after ctx (from Context)
// stopped its work: that of the signal that cancelled it, or 130 (SIGINT's)
// when ctx was not cancelled by a signal.
func ExitStatus(ctx context.Context) int {
	if r := (*Received)(nil); errors.As(context.Cause(ctx), &r) {
		return r.ExitStatus()
	}
	return 130
}
