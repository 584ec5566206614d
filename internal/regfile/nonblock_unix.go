//go:build unix

package regfile

import "syscall"

// nonblock makes the open of a FIFO return at once instead of waiting
// for a writer.
const nonblock = syscall.O_NONBLOCK
