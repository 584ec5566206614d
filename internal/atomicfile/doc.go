// Package atomicfile writes output files so that a reader sees either the old
// file or the whole new one, never a part.
//
// Every write goes to a temporary file beside its target, named
// ".<base>.tmp-<digits>" so that it is recognisable as ours; the temporary file
// is fsynced, given mode 0644, renamed over the target, and the directory is
// fsynced so the rename survives a crash. On any failure the temporary file is
// removed and the target is left untouched.
//
// A process killed with SIGKILL cannot clean up: RemoveStale and
// RemoveStaleFor remove such leftovers at the next start, and Cleanup removes
// the temporary files of writes still in progress when a process is about to
// exit without running its deferred calls (a second SIGINT).
package atomicfile
