//go:build !unix

package regfile

// nonblock: the open flag has no portable equivalent here; the Stat
// before the open refuses non-regular files.
const nonblock = 0

// directory: no such open flag here; the Stat before the open refuses
// anything but a directory.
const directory = 0
