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

// Context returns a context that the first SIGINT or SIGTERM cancels, after
// writing first (if not empty) to w. A second signal removes the temporary
// files of writes in progress and exits the process at once with status
// 128+signal (130 for SIGINT), without running deferred calls. stop releases
// the signals.
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
					if first != "" {
						fmt.Fprintf(w, "%s: %s (again to exit at once)\n", s, first)
					}
					cancelCause(&Received{Signal: s})
					continue
				}
				atomicfile.Cleanup()
				code := 130
				if sig, ok := s.(syscall.Signal); ok {
					code = 128 + int(sig)
				}
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

// Received is the cause (context.Cause) of a context that Context's first
// signal canceled.
type Received struct{ Signal os.Signal }

func (r *Received) Error() string { return "received " + r.Signal.String() }

// ExitCode returns the status a command ends with after ctx (from Context)
// was canceled by a signal: 128+signal (130 for SIGINT, 143 for SIGTERM);
// 0 when no signal canceled it.
func ExitCode(ctx context.Context) int {
	var r *Received
	if !errors.As(context.Cause(ctx), &r) {
		return 0
	}
	if sig, ok := r.Signal.(syscall.Signal); ok {
		return 128 + int(sig)
	}
	return 130
}
