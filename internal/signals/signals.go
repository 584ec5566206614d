// Package signals gives the commands one way to handle SIGINT and SIGTERM:
// the first signal cancels a context so the work in progress stops cleanly
// (a checkpoint, no partial report); a second one exits at once.
package signals

import (
	"context"
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
	ctx, cancel := context.WithCancel(parent)
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
					cancel() // before the message: a reader of w may act on it
					if first != "" {
						fmt.Fprintf(w, "%s: %s (again to exit at once)\n", s, first)
					}
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
