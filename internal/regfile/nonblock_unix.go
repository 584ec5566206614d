//go:build unix

package regfile

import "syscall"

// nonblock makes the open of a FIFO return at once instead of waiting
// for a writer.
const nonblock = syscall.O_NONBLOCK

// directory makes the open of anything but a directory fail at once
// (ENOTDIR), a FIFO swapped in included.
const directory = syscall.O_DIRECTORY
