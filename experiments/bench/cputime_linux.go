package main

import (
	"syscall"
	"time"
	"unsafe"
)

// clockProcessCPUTime is Linux's CLOCK_PROCESS_CPUTIME_ID: the CPU time of
// all the process's threads, to the nanosecond.
const clockProcessCPUTime = 2

// processCPU returns the CPU time the process has used so far, and whether
// this system can tell it.
func processCPU() (time.Duration, bool) {
	var ts syscall.Timespec
	if _, _, e := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockProcessCPUTime, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
