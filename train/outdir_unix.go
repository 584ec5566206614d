//go:build unix

package train

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/vitgo/vit/internal/regfile"
)

// lockDir takes an exclusive, non-blocking flock on dir's LockFile and
// writes this process's PID into it. The lock lives as long as the open
// file: release closes it, and the OS closes it when the process dies.
func lockDir(dir string) (release func(), err error) {
	path := filepath.Join(dir, LockFile)
	f, _, err := regfile.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644) // a FIFO is refused, not opened
	if err != nil {
		return nil, fmt.Errorf("out_dir lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			b, _ := regfile.ReadFile(path)
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			return nil, &OutDirLockedError{Dir: dir, PID: pid}
		}
		return nil, fmt.Errorf("out_dir lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() { f.Close() }, nil
}
