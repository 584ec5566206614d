package train

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/sirupsen/logrus"

	"github.com/vitgo/vit/internal/atomicfile"
	"github.com/vitgo/vit/internal/regfile"
	"github.com/vitgo/vit/report"
)

// LockFile is the file in an output directory that a trainer holds an
// exclusive lock on (flock) while it runs; it holds the trainer's PID. The OS
// releases the lock when the process ends, however it ends.
const LockFile = ".train.lock"

// OutDirLockedError is returned by Run when another process is training into
// the same output directory.
type OutDirLockedError struct {
	Dir string
	PID int // the holder's PID; 0 when it could not be read
}

func (e *OutDirLockedError) Error() string {
	holder := "another process"
	if e.PID > 0 {
		holder = fmt.Sprintf("another trainer (PID %d)", e.PID)
	}
	return fmt.Sprintf("out_dir %s is in use by %s: wait for it to end, stop it, or choose another out_dir", e.Dir, holder)
}

// OutDirUsedError is returned by Run when a fresh run (neither
// Options.Resume nor Options.Overwrite) would write into a directory that
// holds an earlier run's files.
type OutDirUsedError struct {
	Dir   string
	Files []string // the earlier run's files found, sorted
}

func (e *OutDirUsedError) Error() string {
	return fmt.Sprintf("out_dir %s holds an earlier run (%s): resume to continue it, or overwrite to delete that run's files and start afresh",
		e.Dir, strings.Join(e.Files, ", "))
}

// ErrResumeOverwrite is returned by Run for Options.Resume and
// Options.Overwrite together.
var ErrResumeOverwrite = errors.New("resuming and overwriting exclude each other: continue the run, or start it afresh")

// epochFile matches the epoch_N.safetensors checkpoints of keep_last.
var epochFile = regexp.MustCompile(`^epoch_[0-9]+\.safetensors$`)

// isRunFile reports whether name is one of the files a run writes into its
// output directory (the only files Options.Overwrite deletes).
func isRunFile(name string) bool {
	switch name {
	case ConfigFile, MetricsFile, report.StepsFile, CurvesFile, LastModel, LastState, LastEMAModel, BestModel:
		return true
	}
	return epochFile.MatchString(name)
}

// WritesFile reports whether a run writes a file of this base name into
// its out_dir: the run files (config, records, plots, checkpoints) and the
// lock. A command's own output (a profile) must not take one of these
// names there.
func WritesFile(name string) bool { return isRunFile(name) || name == LockFile }

// runFiles lists the run files in dir, sorted.
func runFiles(dir string) ([]string, error) {
	ents, err := regfile.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if isRunFile(e.Name()) {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

// openOutDir makes the output directory Run's alone: it takes the lock,
// removes temporary files that a killed run left, and then, to resume,
// checks that the run can be continued with cfg; for a fresh run, refuses a
// directory holding an earlier run unless opts.Overwrite (which deletes that
// run's files and nothing else). release drops the lock.
func openOutDir(cfg Config, opts Options, log *logrus.Logger) (release func(), err error) {
	dir := cfg.Train.OutDir
	if opts.Resume && opts.Overwrite {
		return nil, ErrResumeOverwrite
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("out_dir: %w", err)
	}
	unlock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			unlock()
		}
	}()
	stale, err := atomicfile.RemoveStale(dir)
	if err != nil {
		return nil, fmt.Errorf("out_dir: %w", err)
	}
	for _, p := range stale {
		log.Infof("removed %s, left by a run that was killed while writing", p)
	}
	if opts.Resume {
		return unlock, checkResume(dir, cfg, log)
	}
	files, err := runFiles(dir)
	if err != nil {
		return nil, fmt.Errorf("out_dir: %w", err)
	}
	why := "overwrite"
	if !opts.Overwrite {
		if !diedBeforeCheckpoint(files) {
			return nil, &OutDirUsedError{Dir: dir, Files: files}
		}
		// A run that ended before its first checkpoint left only its
		// records (config.yaml, header-only CSVs): it cannot be resumed,
		// and a fresh run replaces them.
		why = "the earlier run ended before its first checkpoint"
	}
	for _, f := range files {
		if err := os.Remove(filepath.Join(dir, f)); err != nil {
			return nil, fmt.Errorf("%s: %w", why, err)
		}
	}
	if len(files) > 0 {
		log.Infof("%s: deleted its %s from %s", why, strings.Join(files, ", "), dir)
	}
	return unlock, nil
}

// diedBeforeCheckpoint reports whether a directory's run files are those
// of a run that ended before it wrote a checkpoint: no model or state file,
// so nothing to resume and no model to mix up with a new run's.
func diedBeforeCheckpoint(files []string) bool {
	for _, f := range files {
		switch f {
		case ConfigFile, MetricsFile, report.StepsFile, CurvesFile:
		default:
			return false
		}
	}
	return true
}
